"""Gradients by loss.backward(), the loss as y.pow(2).mean(), leaves made with requires_grad_."""


def torch_grads(forward, x, w, b):
    x, w, b = (t.clone().detach().requires_grad_(True) for t in (x, w, b))
    y = forward(x, w, b)
    loss = y.pow(2).mean()
    loss.backward()
    return y.detach(), loss.detach(), x.grad.detach(), w.grad.detach(), b.grad.detach()
