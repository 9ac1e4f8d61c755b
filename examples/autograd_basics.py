"""The book's first autograd example: z = x * y + x at x = 3, y = 2.

x reaches z along two paths (through Mul and directly into Add), so its two
gradient contributions are summed: dz/dx = y + 1 = 3, and dz/dy = x = 3.
"""
import zero

x = zero.tensor(3.0, requires_grad=True)
y = zero.tensor(2.0, requires_grad=True)

z = x * y + x  # x * y = 6, z = 9
z.backward()   # starts from dz/dz = 1

print(f"z = {z.item():g}")
print(f"dz/dx = {x.grad.item():g}  (y + 1)")
print(f"dz/dy = {y.grad.item():g}  (x)")
assert (z.item(), x.grad.item(), y.grad.item()) == (9.0, 3.0, 3.0)
