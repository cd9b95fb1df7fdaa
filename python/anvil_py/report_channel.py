"""The worker's report to anvil (docs/protocol.md, report channel): one JSON line per message on a pipe anvil drains
while the worker runs. What went out stays sent: the candidate's code in this process can add lines but not take one
back or rewrite one, as it could a file in its own folder (catalog D5, D6: a rewritten aten_ops.json, outputs
overwritten after the worker wrote them). The worker sends a seal of every tensor folder it writes (some elements of
each output, drawn at random as it is written: a file changed later does not match), a digest of the kernel trace
it writes, what its traces saw (cumulative) and what the tamper guard found. Before each message it checks that the
descriptor is still anvil's pipe (a candidate could put /dev/null in its place).
"""

import hashlib
import json
import os

import numpy
import torch

SEAL_POINTS = 256  # Elements of each output: a file rewritten after its seal differs in some of them.


class ReportChannel:
    def __init__(self, fd):
        self.fd = fd
        st = os.fstat(fd)
        self.identity = (st.st_dev, st.st_ino)

    def send(self, message):
        st = os.fstat(self.fd)
        if (st.st_dev, st.st_ino) != self.identity:
            raise RuntimeError("the report channel was replaced (its descriptor is not anvil's pipe any more)")
        data = (json.dumps(message) + "\n").encode()
        while data:
            data = data[os.write(self.fd, data):]

    def seal(self, rel, written):
        """Seals the tensor folder `rel` (relative to the worker's output folder) from write_dir's tensors."""
        rng = numpy.random.default_rng(int.from_bytes(os.urandom(8), "little"))
        tensors = []
        for name, t in written:
            raw = t.reshape(-1).view(torch.uint8).numpy() if t.numel() else numpy.empty(0, numpy.uint8)
            size = t.element_size()
            n = t.numel()
            picked = rng.choice(n, size=min(n, SEAL_POINTS), replace=False) if n else []
            points = [[int(i), raw[int(i) * size:(int(i) + 1) * size].tobytes().hex()] for i in sorted(picked)]
            tensors.append({"name": name, "shape": list(t.shape), "itemsize": size, "points": points})
        self.send({"kind": "seal", "dir": rel, "tensors": tensors})

    def seal_file(self, out_dir, rel):
        """Seals a file the worker wrote whole (the kernel trace) by its digest."""
        with open(os.path.join(out_dir, rel), "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        self.send({"kind": "file", "file": rel, "sha256": digest})
