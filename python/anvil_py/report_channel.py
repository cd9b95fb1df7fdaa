"""The worker's report to anvil (docs/protocol.md, report channel): one JSON line per message on a pipe anvil drains
while the worker runs. What went out stays sent: the candidate's code in this process can add lines but not take one
back or rewrite one, as it could a file in its own folder (catalog D5, D6: a rewritten aten_ops.json or kernel
trace). The worker sends a digest of the kernel trace it writes, what its traces saw (cumulative) and what the
tamper guard found; outputs go to the task server's buffers, not to files. Before each message it checks that the
descriptor is still anvil's pipe (a candidate could put /dev/null in its place).
"""

import hashlib
import json
import os


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

    def seal_file(self, out_dir, rel):
        """Seals a file the worker wrote whole (the kernel trace) by its digest."""
        with open(os.path.join(out_dir, rel), "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        self.send({"kind": "file", "file": rel, "sha256": digest})
