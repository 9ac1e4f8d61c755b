"""The book's Python front-end example: linear regression with zero.nn and zero.optim.

Two samples, a Linear(2, 1) model and plain SGD. The model is an ordinary
Python object; every arithmetic step is a Zero op recorded in the graph, and
optimizer.step() updates the parameters under no_grad.
"""
import zero

zero.manual_seed(0)
model = zero.nn.Linear(2, 1)
optimizer = zero.optim.SGD(model.parameters(), lr=0.05)

inputs = zero.tensor([[1.0, 2.0], [2.0, 1.0]])
targets = zero.tensor([[5.0], [4.0]])

for step in range(300):
    error = model(inputs) - targets
    loss = (error * error).mean()

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        print(f"step {step:3d}  loss {loss.item():.6f}")

print(f"final loss {loss.item():.2e}; predictions {model(inputs).detach().reshape(-1).tolist()} "
      f"for targets [5.0, 4.0]")
assert loss.item() < 1e-3, "linear regression did not converge"
