"""The book's first example, end to end."""
import zero


def test_book_example_gradients():
    x = zero.tensor(3.0, requires_grad=True)
    y = zero.tensor(2.0, requires_grad=True)
    z = x * y + x
    z.backward()
    assert z.item() == 9.0
    assert x.grad.item() == 3.0
    assert y.grad.item() == 3.0
