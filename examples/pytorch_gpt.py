"""A character-level GPT written the way PyTorch programs are written.

It runs on Zero as shipped. Its one line that names a framework is
``import zero as torch``: change it to ``import torch`` and it is a PyTorch program --
``tests/test_pytorch_programs.py`` does exactly that and checks that the losses equal
PyTorch's, step by step.

It uses what such scripts use: a Dataset and a custom Sampler under a DataLoader, a
model with weight tying, a causal-mask buffer and ``self.apply(init)``, AdamW with
decay and no-decay groups, a LambdaLR warm-up + cosine schedule, gradient clipping,
``@torch.no_grad()`` evaluation, a checkpoint saved and resumed, and sampling with
``topk`` + ``multinomial``.

    python examples/pytorch_gpt.py --steps 40 --out runs/pytorch_gpt

(--out is created if it does not exist; a few seconds on 2 cores.) The weights are set
from Python's ``random`` after the usual initialisation, so that two libraries start
from the same numbers; the last line printed is JSON of the losses.
"""
import argparse
import json
import math
import os
import random

import zero as torch

nn = torch.nn
F = torch.nn.functional

TEXT = ("First Citizen: Before we proceed any further, hear me speak. All: Speak, speak. "
        "First Citizen: You are all resolved rather to die than to famish? All: Resolved. resolved. "
        "First Citizen: First, you know Caius Marcius is chief enemy to the people. ") * 4


class CharDataset(torch.utils.data.Dataset):
    def __init__(self, text, block_size):
        chars = sorted(set(text))
        self.stoi = {ch: i for i, ch in enumerate(chars)}
        self.itos = {i: ch for ch, i in self.stoi.items()}
        self.data = torch.tensor([self.stoi[c] for c in text], dtype=torch.long)
        self.block_size = block_size

    def __len__(self):
        return len(self.data) - self.block_size

    def __getitem__(self, i):
        chunk = self.data[i:i + self.block_size + 1]
        return chunk[:-1], chunk[1:]


class ShuffledSampler(torch.utils.data.Sampler):
    """The same order in every library: a permutation from Python's random."""

    def __init__(self, data_source, seed):
        self.n, self.seed = len(data_source), seed

    def __iter__(self):
        order = list(range(self.n))
        random.Random(self.seed).shuffle(order)
        return iter(order)

    def __len__(self):
        return self.n


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, flash):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head, self.n_embd, self.flash = n_head, n_embd, flash
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size, flash):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, flash)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_layer, n_head, n_embd, flash=True):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd),
            wpe=nn.Embedding(block_size, n_embd),
            h=nn.ModuleList([Block(n_embd, n_head, block_size, flash) for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(n_embd),
        ))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


def set_shared_weights(model, seed):
    """Overwrite every parameter with numbers both libraries can make: N(0, 0.02) from
    Python's random, LayerNorm weights near 1."""
    rng = random.Random(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            base = 1.0 if name.endswith("weight") and p.dim() == 1 else 0.0
            values = [base + rng.gauss(0.0, 0.02) for _ in range(p.numel())]
            p.copy_(torch.tensor(values, dtype=p.dtype).view(p.shape))


def make_optimizer(model, lr, weight_decay):
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))


def make_schedule(optimizer, warmup, total):
    def lr_lambda(step):
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, total - warmup)
        return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)


@torch.no_grad()
def estimate_loss(model, loader, batches):
    model.eval()
    losses = torch.zeros(batches)
    for k, (x, y) in zip(range(batches), loader):
        _, loss = model(x, y)
        losses[k] = loss.item()
    model.train()
    return losses.mean().item()


def train_step(model, optimizer, scheduler, x, y):
    _, loss = model(x, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    return loss


def train(args, model, optimizer, scheduler, loader, first_step, losses):
    step = first_step
    while step < args.steps:
        for x, y in loader:
            if step >= args.steps:
                break
            loss = train_step(model, optimizer, scheduler, x, y)
            losses.append(loss.item())
            if step % 10 == 0:
                print(f"step {step}: loss {loss:.4f}, lr {scheduler.get_last_lr()[0]:.2e}")
            step += 1
            if step == args.save_at:
                torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                            "scheduler": scheduler.state_dict(), "step": step, "losses": losses},
                           os.path.join(args.out, "ckpt.pt"))
                return step
    return step


def build(args, dataset):
    model = GPT(len(dataset.stoi), args.block_size, args.n_layer, args.n_head, args.n_embd, flash=args.flash)
    set_shared_weights(model, args.seed)
    optimizer = make_optimizer(model, args.lr, 0.1)
    scheduler = make_schedule(optimizer, warmup=5, total=args.steps)
    return model, optimizer, scheduler


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--save-at", type=int, default=20, help="save a checkpoint and resume from it here")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--block-size", type=int, default=16)
    parser.add_argument("--n-layer", type=int, default=2)
    parser.add_argument("--n-head", type=int, default=2)
    parser.add_argument("--n-embd", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=1337)
    parser.add_argument("--flash", type=int, default=1, help="1: F.scaled_dot_product_attention, 0: by hand")
    parser.add_argument("--out", default="runs/pytorch_gpt", help="where the checkpoint goes (created)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    assert device.type in ("cpu", "cuda")

    dataset = CharDataset(TEXT, args.block_size)
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size,
                                         sampler=ShuffledSampler(dataset, args.seed), drop_last=True)
    model, optimizer, scheduler = build(args, dataset)
    print(f"{sum(p.numel() for p in model.parameters()):,} parameters")
    losses = []
    step = train(args, model, optimizer, scheduler, loader, 0, losses)

    # Resume from the checkpoint in fresh objects, as a new process would.
    checkpoint = torch.load(os.path.join(args.out, "ckpt.pt"), map_location="cpu", weights_only=True)
    model, optimizer, scheduler = build(args, dataset)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    losses = list(checkpoint["losses"])
    step = train(args, model, optimizer, scheduler, loader, checkpoint["step"], losses)

    evaluation = estimate_loss(model, loader, 4)
    prompt = torch.tensor([[dataset.stoi["F"]]], dtype=torch.long)
    sample = model.generate(prompt, 30, temperature=0.8, top_k=5)[0].tolist()
    print("sample:", "".join(dataset.itos[i] for i in sample))
    print(json.dumps({"losses": losses, "eval": evaluation, "steps": step}))


if __name__ == "__main__":
    main()
