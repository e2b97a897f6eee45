"""memograph-capture demo: a small transformer language model, one snapshot per setting, and a peak table.

Settings: model size, context length, precision (fp32, or bf16 autocast) and mode (forward only, or a
full training step: forward, backward, optimizer step). Each runs in a clean allocator state with memory
history recording, and writes demo_{model}_{mode}_{precision}_ctx{N}.pickle (pickle protocol 4).

The table gives two peaks per setting. "live peak" is the highest sum of the sizes the program asked for
(memory_stats' requested_bytes): the snapshot's trace records those sizes, so it is the peak `memograph
summary` and `compare` read from the file. "allocated peak" is torch.cuda.max_memory_allocated(), the
allocator's blocks: each request rounded up to 512 bytes, and a block not split when the rest would be
small, so it may be above the live peak (by up to 2 MiB on the tiny model in bf16, on an H200).
"""
import argparse
import gc
import os
import pickle
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

MODELS = {"tiny": dict(d_model=256, n_layers=4, n_heads=4, vocab=8192, batch=8),
          "small": dict(d_model=768, n_layers=12, n_heads=12, vocab=32000, batch=8)}


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ff1, self.ff2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).transpose(1, 3).unbind(2)
        att = (q @ k.transpose(-2, -1)) / (d // self.heads) ** 0.5
        att = att.masked_fill(torch.ones(t, t, device=x.device, dtype=torch.bool).triu(1), float("-inf"))
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.ff2(F.gelu(self.ff1(self.ln2(x))))


class LM(nn.Module):
    def __init__(self, d_model, n_layers, n_heads, vocab, context):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d_model), nn.Embedding(context, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_heads) for _ in range(n_layers))
        self.ln, self.head = nn.LayerNorm(d_model), nn.Linear(d_model, vocab, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x))


def run(model_name, context, precision, mode, out, max_entries):
    cfg = dict(MODELS[model_name])
    batch = cfg.pop("batch")
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=max_entries)
    model = LM(context=context, **cfg).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4) if mode == "train" else None
    idx = torch.randint(0, cfg["vocab"], (batch, context), device="cuda")
    amp = torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16")
    if mode == "forward":
        with torch.no_grad(), amp:
            model(idx)
    else:
        with amp:
            loss = F.cross_entropy(model(idx).float().view(-1, cfg["vocab"]), idx.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    stats = torch.cuda.memory_stats()  # max_memory_allocated() is its allocated_bytes.all.peak
    live_peak, allocated_peak = stats.get("requested_bytes.all.peak"), stats.get("allocated_bytes.all.peak", 0)
    path = os.path.join(out, f"demo_{model_name}_{mode}_{precision}_ctx{context}.pickle")
    with open(path, "wb") as f:
        pickle.dump(torch.cuda.memory._snapshot(), f, protocol=4)
    torch.cuda.memory._record_memory_history(enabled=None)
    del model, opt, idx
    return live_peak, allocated_peak, path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="memograph_snapshots")
    ap.add_argument("--model", default="tiny", choices=sorted(MODELS))
    ap.add_argument("--context", default="128,256,512")
    ap.add_argument("--precision", default="fp32,bf16")
    ap.add_argument("--mode", default="forward,train")
    ap.add_argument("--max-entries", type=int, default=100000)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for mode in a.mode.split(","):
        for precision in a.precision.split(","):
            for context in [int(c) for c in a.context.split(",")]:
                live, allocated, path = run(a.model, context, precision, mode, a.out, a.max_entries)
                rows.append((mode, precision, context, live, allocated, path))
                print(f"wrote {path}", file=sys.stderr)
    mib = lambda n: "n/a" if n is None else f"{n / 2**20:.1f}"
    print(f"{'mode':<8} {'precision':<9} {'context':>7} {'live peak MiB':>14} {'allocated peak MiB':>19}  snapshot")
    for mode, precision, context, live, allocated, path in rows:
        print(f"{mode:<8} {precision:<9} {context:>7} {mib(live):>14} {mib(allocated):>19}  {path}")


if __name__ == "__main__":
    main()
