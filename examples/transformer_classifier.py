"""A small Transformer encoder that classifies token sequences, in PyTorch's idiom.

The task is made up so that it needs no download and a model must look at the whole
sequence: sequences of random tokens of random lengths (padded with 0), labelled 1 when
token 1 occurs more often than token 2. It runs on Zero as shipped; with its one framework
line, ``import zero as torch``, changed to ``import torch`` it is a PyTorch program, and
``tests/test_layer_programs.py`` runs both from the same initial weights.

    python examples/transformer_classifier.py          # a few seconds on 2 CPU cores

What it uses: ``nn.Embedding(padding_idx=0)``, a learnt positional ``nn.Parameter``,
``nn.TransformerEncoder`` of pre-norm ``nn.TransformerEncoderLayer`` (batch_first) with a
key-padding mask, masked mean pooling, ``nn.Linear``, ``nn.CrossEntropyLoss``, AdamW and
a ``LambdaLR`` warm-up. ``--save-init``/``--load-init`` as in ``char_lstm.py``; the last
line printed is JSON of the losses.
"""
import argparse
import json

import numpy as np

import zero as torch

nn = torch.nn


def make_data(count, vocab, max_len, seed):
    """Token ids (count, max_len) padded with 0 after each sequence's length, and labels."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(max_len // 2, max_len + 1, size=count)
    tokens = rng.integers(1, vocab, size=(count, max_len))
    tokens[np.arange(max_len)[None, :] >= lengths[:, None]] = 0
    labels = ((tokens == 1).sum(1) > (tokens == 2).sum(1)).astype(np.int64)
    return torch.from_numpy(tokens), torch.from_numpy(labels)


class Classifier(nn.Module):
    def __init__(self, vocab, d_model, nhead, layers, max_len, dropout):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model, padding_idx=0)
        self.position = nn.Parameter(torch.zeros(1, max_len, d_model))
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=4 * d_model, dropout=dropout,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=layers, norm=nn.LayerNorm(d_model),
                                             enable_nested_tensor=False)
        self.head = nn.Linear(d_model, 2)
        nn.init.normal_(self.position, std=0.02)

    def forward(self, tokens):
        padding = tokens == 0                                               # (B, T) True: not a token
        x = self.embed(tokens) + self.position[:, :tokens.size(1)]          # (B, T, C)
        x = self.encoder(x, src_key_padding_mask=padding)
        keep = (~padding).unsqueeze(-1).float()                             # (B, T, 1)
        pooled = (x * keep).sum(1) / keep.sum(1)                            # (B, C)
        return self.head(pooled)


def save_weights(model, path):
    np.savez(path, **{name: value.detach().cpu().numpy() for name, value in model.state_dict().items()})


def load_weights(model, path):
    with np.load(path) as arrays:
        model.load_state_dict({name: torch.from_numpy(arrays[name]) for name in arrays.files})


def main():
    parser = argparse.ArgumentParser(description="Train a Transformer encoder classifier on made-up sequences.")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-len", type=int, default=24)
    parser.add_argument("--vocab", type=int, default=8)
    parser.add_argument("--d-model", type=int, default=32)
    parser.add_argument("--nhead", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--save-init")
    parser.add_argument("--load-init")
    args = parser.parse_args()

    torch.manual_seed(0)
    tokens, labels = make_data(args.batch_size * 16, args.vocab, args.max_len, seed=1)
    test_tokens, test_labels = make_data(256, args.vocab, args.max_len, seed=2)
    model = Classifier(args.vocab, args.d_model, args.nhead, args.layers, args.max_len, args.dropout)
    if args.save_init:
        save_weights(model, args.save_init)
    if args.load_init:
        load_weights(model, args.load_init)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warmup = max(1, args.steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup))
    criterion = nn.CrossEntropyLoss()

    losses, batches = [], len(tokens) // args.batch_size
    model.train()
    for step in range(args.steps):
        i = step % batches * args.batch_size
        logits = model(tokens[i:i + args.batch_size])
        loss = criterion(logits, labels[i:i + args.batch_size])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        if step % 50 == 0 or step == args.steps - 1:
            print(f"step {step:4d}  loss {loss.item():.4f}")
    model.eval()
    with torch.no_grad():
        accuracy = (model(test_tokens).argmax(-1) == test_labels).float().mean().item()
    print(f"test accuracy {accuracy:.3f}")
    print(json.dumps({"losses": losses, "accuracy": accuracy}))


if __name__ == "__main__":
    main()
