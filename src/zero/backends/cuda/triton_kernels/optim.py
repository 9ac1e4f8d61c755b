"""Optimizer updates: one pass over a parameter reads p, g and the state once and writes
them once. The arithmetic is float64 and each result is rounded once, as the CPU
loops do, so a step on the GPU matches a step on the CPU to the last bit or so."""
import triton
import triton.language as tl


@triton.jit
def adamw_kernel(param_ptr, grad_ptr, exp_avg_ptr, exp_avg_sq_ptr, n, lr: tl.float64, beta1: tl.float64,
                 beta2: tl.float64, eps_inside: tl.float64, eps_outside: tl.float64, weight_decay: tl.float64,
                 step_size: tl.float64, BLOCK: tl.constexpr):
    """m = β1 m + (1-β1) g;  v = β2 v + (1-β2) g²;
    p -= step_size m / (√(v + eps_inside) + eps_outside) + lr wd p."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    _adamw_block(param_ptr, grad_ptr, exp_avg_ptr, exp_avg_sq_ptr, offsets, offsets < n, lr, beta1, beta2,
                 eps_inside, eps_outside, weight_decay, step_size)


@triton.jit
def adamw_many_kernel(table_ptr, tensor_count, lr: tl.float64, beta1: tl.float64, beta2: tl.float64,
                      eps_inside: tl.float64, eps_outside: tl.float64, weight_decay: tl.float64,
                      step_size: tl.float64, FLOAT64: tl.constexpr, TENSORS: tl.constexpr, BLOCK: tl.constexpr):
    """adamw_kernel over many parameters in one launch; the table's columns: p, g, m, v."""
    entry, offsets, mask = _table_block(table_ptr, tensor_count, 4, TENSORS, BLOCK)
    _adamw_block(_table_pointer(entry, 0, FLOAT64), _table_pointer(entry, 1, FLOAT64),
                 _table_pointer(entry, 2, FLOAT64), _table_pointer(entry, 3, FLOAT64), offsets, mask, lr, beta1,
                 beta2, eps_inside, eps_outside, weight_decay, step_size)


@triton.jit
def _table_block(table_ptr, tensor_count, COLUMNS: tl.constexpr, TENSORS: tl.constexpr, BLOCK: tl.constexpr):
    """This program's place in a many-tensor table, a uint64 array of one row per tensor:
    COLUMNS addresses, the tensor's length, its first block's program (TENSORS: a power of
    two at least the row count). The program's tensor is the last whose first program is at
    most this one (one vector load of that column); gives the tensor's row, the block's
    offsets and their mask."""
    program = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, TENSORS)
    present = rows < tensor_count
    firsts = tl.load(table_ptr + rows * (COLUMNS + 2) + (COLUMNS + 1), mask=present, other=0).to(tl.int64)
    index = tl.sum((present & (firsts <= program)).to(tl.int32), axis=0) - 1
    entry = table_ptr + index.to(tl.int64) * (COLUMNS + 2)
    offsets = (program - tl.load(entry + COLUMNS + 1).to(tl.int64)) * BLOCK + tl.arange(0, BLOCK)
    return entry, offsets, offsets < tl.load(entry + COLUMNS).to(tl.int64)


@triton.jit
def _table_pointer(entry, COLUMN: tl.constexpr, FLOAT64: tl.constexpr):
    """The address in a table row's column, as a pointer to float64 or float32."""
    address = tl.load(entry + COLUMN)
    if FLOAT64:
        pointer = address.to(tl.pointer_type(tl.float64), bitcast=True)
    else:
        pointer = address.to(tl.pointer_type(tl.float32), bitcast=True)
    return pointer


@triton.jit
def _adamw_block(param_ptr, grad_ptr, exp_avg_ptr, exp_avg_sq_ptr, offsets, mask, lr, beta1, beta2, eps_inside,
                 eps_outside, weight_decay, step_size):
    """The update of one block of a parameter, in float64, each result rounded once."""
    g = tl.load(grad_ptr + offsets, mask=mask, other=0.0).to(tl.float64)
    m = beta1 * tl.load(exp_avg_ptr + offsets, mask=mask, other=0.0) + (1.0 - beta1) * g
    v = beta2 * tl.load(exp_avg_sq_ptr + offsets, mask=mask, other=0.0) + (1.0 - beta2) * g * g
    tl.store(exp_avg_ptr + offsets, m, mask=mask)
    tl.store(exp_avg_sq_ptr + offsets, v, mask=mask)
    p = tl.load(param_ptr + offsets, mask=mask, other=0.0).to(tl.float64)
    p = p - step_size * m / (tl.sqrt(v + eps_inside) + eps_outside) - lr * weight_decay * p
    tl.store(param_ptr + offsets, p, mask=mask)


@triton.jit
def sgd_kernel(param_ptr, grad_ptr, buffer_ptr, n, lr: tl.float64, momentum: tl.float64,
               dampening: tl.float64, weight_decay: tl.float64, HAS_MOMENTUM: tl.constexpr,
               FIRST_STEP: tl.constexpr, NESTEROV: tl.constexpr, BLOCK: tl.constexpr):
    """PyTorch's SGD: g += wd p; buf = g (first step) or μ buf + (1-τ) g;
    d = g + μ buf (nesterov) or buf; p -= lr d."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    p = tl.load(param_ptr + offsets, mask=mask, other=0.0).to(tl.float64)
    g = tl.load(grad_ptr + offsets, mask=mask, other=0.0) + weight_decay * p
    if HAS_MOMENTUM:
        if FIRST_STEP:
            b = g
        else:
            b = momentum * tl.load(buffer_ptr + offsets, mask=mask, other=0.0) + (1.0 - dampening) * g
        tl.store(buffer_ptr + offsets, b, mask=mask)
        if NESTEROV:
            g = g + momentum * b
        else:
            g = b
    tl.store(param_ptr + offsets, p - lr * g, mask=mask)


# -- clip_grad_norm_: every gradient's sum of squares, then every gradient scaled -------------
# Tables with one column, the gradients (``_table_block``).


@triton.jit
def squared_norm_parts_kernel(table_ptr, tensor_count, parts_ptr, FLOAT64: tl.constexpr, TENSORS: tl.constexpr,
                              BLOCK: tl.constexpr):
    """parts[program] = the sum of the squares of one block of one gradient, in float64."""
    entry, offsets, mask = _table_block(table_ptr, tensor_count, 1, TENSORS, BLOCK)
    x = tl.load(_table_pointer(entry, 0, FLOAT64) + offsets, mask=mask, other=0.0).to(tl.float64)
    tl.store(parts_ptr + tl.program_id(0), tl.sum(x * x, axis=0))


@triton.jit
def squared_norms_kernel(table_ptr, parts_ptr, out_ptr, BLOCK_ELEMENTS, PARTS: tl.constexpr):
    """out[gradient] = the sum of its blocks' parts, in their order (the same sum every run),
    rounded once to out's dtype."""
    entry = table_ptr + tl.program_id(0).to(tl.int64) * 3
    first = tl.load(entry + 2).to(tl.int64)
    count = tl.cdiv(tl.load(entry + 1).to(tl.int64), BLOCK_ELEMENTS)
    total = tl.zeros((PARTS,), tl.float64)
    for start in range(0, count, PARTS):
        index = start + tl.arange(0, PARTS)
        total += tl.load(parts_ptr + first + index, mask=index < count, other=0.0)
    tl.store(out_ptr + tl.program_id(0), tl.sum(total, axis=0))


@triton.jit
def scale_many_kernel(table_ptr, tensor_count, factor_ptr, FLOAT64: tl.constexpr, TENSORS: tl.constexpr,
                      BLOCK: tl.constexpr):
    """Each block of each gradient times the 0-d factor (read on the device: no host wait)."""
    entry, offsets, mask = _table_block(table_ptr, tensor_count, 1, TENSORS, BLOCK)
    pointer = _table_pointer(entry, 0, FLOAT64) + offsets
    tl.store(pointer, tl.load(pointer, mask=mask) * tl.load(factor_ptr), mask=mask)


# -- AdamW's capturable step (issue 38: CUDA graphs) ---------------------------------------------
# Nothing that changes from step to step comes from the host: each parameter's count is a 0-d
# array the first launch advances, the second reads it (and the lr, when it is an array) and
# works out the bias corrections itself, so a replayed graph counts on and follows a schedule.


@triton.jit
def step_count_kernel(table_ptr, STEP_FLOAT64: tl.constexpr):
    """counter += 1 for each row of a one-column table of 0-d counters; one program a row."""
    counter = _table_pointer(table_ptr + tl.program_id(0).to(tl.int64) * 3, 0, STEP_FLOAT64)
    tl.store(counter, tl.load(counter) + 1.0)


@triton.jit
def adamw_capturable_many_kernel(table_ptr, tensor_count, lr_ptr, lr_value: tl.float64, beta1: tl.float64,
                                 beta2: tl.float64, eps: tl.float64, weight_decay: tl.float64,
                                 LR_ON_DEVICE: tl.constexpr, EPS_INSIDE: tl.constexpr, STEP_FLOAT64: tl.constexpr,
                                 FLOAT64: tl.constexpr, TENSORS: tl.constexpr, BLOCK: tl.constexpr):
    """adamw_many_kernel with the table's fifth column each parameter's count t (already
    advanced) and lr read from lr_ptr when LR_ON_DEVICE (else lr_value)."""
    entry, offsets, mask = _table_block(table_ptr, tensor_count, 5, TENSORS, BLOCK)
    t = tl.load(_table_pointer(entry, 4, STEP_FLOAT64)).to(tl.float64)
    lr, eps_inside, eps_outside, step_size = _adamw_scalars(t, lr_ptr, lr_value, beta1, beta2, eps, LR_ON_DEVICE,
                                                            EPS_INSIDE)
    _adamw_block(_table_pointer(entry, 0, FLOAT64), _table_pointer(entry, 1, FLOAT64),
                 _table_pointer(entry, 2, FLOAT64), _table_pointer(entry, 3, FLOAT64), offsets, mask, lr, beta1,
                 beta2, eps_inside, eps_outside, weight_decay, step_size)


@triton.jit
def adamw_capturable_kernel(param_ptr, grad_ptr, exp_avg_ptr, exp_avg_sq_ptr, step_ptr, n, lr_ptr,
                            lr_value: tl.float64, beta1: tl.float64, beta2: tl.float64, eps: tl.float64,
                            weight_decay: tl.float64, LR_ON_DEVICE: tl.constexpr, EPS_INSIDE: tl.constexpr,
                            BLOCK: tl.constexpr):
    """adamw_kernel with the count t (already advanced) read from step_ptr and the lr as above:
    the parameters the table's kernel does not take (16-bit ones)."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    t = tl.load(step_ptr).to(tl.float64)
    lr, eps_inside, eps_outside, step_size = _adamw_scalars(t, lr_ptr, lr_value, beta1, beta2, eps, LR_ON_DEVICE,
                                                            EPS_INSIDE)
    _adamw_block(param_ptr, grad_ptr, exp_avg_ptr, exp_avg_sq_ptr, offsets, offsets < n, lr, beta1, beta2,
                 eps_inside, eps_outside, weight_decay, step_size)


@triton.jit
def _adamw_scalars(t, lr_ptr, lr_value, beta1, beta2, eps, LR_ON_DEVICE: tl.constexpr, EPS_INSIDE: tl.constexpr):
    """(lr, eps_inside, eps_outside, step_size) at count t, in float64: the host's numbers
    (``kernel_contract.adamw_scalars``), β^t as exp(t log β) (within a few ulps of pow)."""
    if LR_ON_DEVICE:
        lr = tl.load(lr_ptr).to(tl.float64)
    else:
        lr = lr_value
    root_of_correction = tl.sqrt(1.0 - tl.exp(t * tl.log(beta2)))
    step_size = lr * root_of_correction / (1.0 - tl.exp(t * tl.log(beta1)))
    if EPS_INSIDE:
        eps_inside = eps
        eps_outside = eps * 0.0
    else:
        eps_inside = eps * 0.0
        eps_outside = eps * root_of_correction
    return lr, eps_inside, eps_outside, step_size
