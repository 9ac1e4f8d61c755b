"""A character-level LSTM language model, written the way PyTorch programs are written.

It runs on Zero as shipped; with its one framework line, ``import zero as torch``, changed
to ``import torch`` it is a PyTorch program, and ``tests/test_layer_programs.py`` runs both
from the same initial weights and compares the losses step by step.

    python examples/char_lstm.py                 # a few seconds on 2 CPU cores
    python examples/char_lstm.py --steps 20 --hidden 32

What it uses: ``nn.Embedding``, a two-layer ``nn.LSTM`` (batch_first) whose state is
carried from batch to batch and detached (truncated backpropagation through time),
``nn.Linear``, ``F.cross_entropy``, Adam, gradient clipping and sampling with
``multinomial``. ``--save-init``/``--load-init`` write and read the initial weights as
a NumPy ``.npz`` file, so two libraries start from the same numbers; the last line
printed is JSON of the losses.
"""
import argparse
import json

import numpy as np

import zero as torch

nn = torch.nn
F = torch.nn.functional

TEXT = ("It is a truth universally acknowledged, that a single man in possession of a good fortune, "
        "must be in want of a wife. However little known the feelings or views of such a man may be "
        "on his first entering a neighbourhood, this truth is so well fixed in the minds of the "
        "surrounding families, that he is considered the rightful property of some one or other "
        "of their daughters. ") * 8


class CharLSTM(nn.Module):
    def __init__(self, vocab_size, embed_size, hidden_size, num_layers, dropout):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_size)
        self.lstm = nn.LSTM(embed_size, hidden_size, num_layers=num_layers, dropout=dropout, batch_first=True)
        self.head = nn.Linear(hidden_size, vocab_size)

    def forward(self, x, state=None):
        out, state = self.lstm(self.embed(x), state)       # (B, T, E) -> (B, T, H)
        return self.head(out), state                         # (B, T, vocab)


def save_weights(model, path):
    np.savez(path, **{name: value.detach().cpu().numpy() for name, value in model.state_dict().items()})


def load_weights(model, path):
    with np.load(path) as arrays:
        model.load_state_dict({name: torch.from_numpy(arrays[name]) for name in arrays.files})


@torch.no_grad()
def sample(model, stoi, itos, prompt, length, temperature=0.8):
    model.eval()
    ids = torch.tensor([[stoi[c] for c in prompt]])
    logits, state = model(ids)
    out = list(prompt)
    for _ in range(length):
        probs = F.softmax(logits[:, -1] / temperature, dim=-1)
        next_id = torch.multinomial(probs, num_samples=1)    # (1, 1)
        out.append(itos[next_id.item()])
        logits, state = model(next_id, state)
    model.train()
    return "".join(out)


def main():
    parser = argparse.ArgumentParser(description="Train a character-level LSTM language model.")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--embed", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--save-init", help="write the initial weights to this .npz file")
    parser.add_argument("--load-init", help="start from the weights in this .npz file")
    args = parser.parse_args()

    torch.manual_seed(0)
    chars = sorted(set(TEXT))
    stoi = {c: i for i, c in enumerate(chars)}
    itos = {i: c for c, i in stoi.items()}
    data = torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)
    streams = len(data) // args.batch_size
    data = data[:streams * args.batch_size].view(args.batch_size, streams)   # one stream per row

    model = CharLSTM(len(chars), args.embed, args.hidden, args.layers, args.dropout)
    if args.save_init:
        save_weights(model, args.save_init)
    if args.load_init:
        load_weights(model, args.load_init)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    losses, state, position = [], None, 0
    for step in range(args.steps):
        if position + args.seq_len + 1 > streams:
            position, state = 0, None
        x = data[:, position:position + args.seq_len]
        y = data[:, position + 1:position + args.seq_len + 1]
        position += args.seq_len
        if state is not None:
            state = tuple(s.detach() for s in state)         # truncated backpropagation through time
        logits, state = model(x, state)
        loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
        if step % 50 == 0 or step == args.steps - 1:
            print(f"step {step:4d}  loss {loss.item():.4f}")
    print(sample(model, stoi, itos, "It is ", 60))
    print(json.dumps({"losses": losses}))


if __name__ == "__main__":
    main()
