"""The book's smallest training loop: fit pred = w * x + b by hand.

Each step clears the gradients, builds the graph for the squared error, runs
backward, and updates w and b under no_grad so the update itself is not
recorded (the book's Parameter::Update).
"""
import zero

zero.manual_seed(0)
x = zero.linspace(-1.0, 1.0, 32)
y = 2.0 * x + 0.5  # the line to recover: w = 2, b = 0.5

w = zero.tensor([0.1], requires_grad=True)
b = zero.tensor([0.0], requires_grad=True)
learning_rate = 0.1

for step in range(200):
    w.grad = None
    b.grad = None

    pred = w * x + b
    diff = pred - y
    loss = (diff * diff).mean()
    loss.backward()

    with zero.no_grad():
        w -= w.grad * learning_rate
        b -= b.grad * learning_rate
    if step % 50 == 0 or step == 199:
        print(f"step {step:3d}  loss {loss.item():.6f}  w {w.item():.4f}  b {b.item():.4f}")

assert abs(w.item() - 2.0) < 1e-2 and abs(b.item() - 0.5) < 1e-2, "did not converge"
print("converged: w ≈ 2, b ≈ 0.5")
