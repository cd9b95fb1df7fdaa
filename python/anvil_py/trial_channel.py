"""Trial data on a socket (docs/protocol.md, "trial data"): tensors as descriptors of memory of their own.

Both sides of the data channel between the task server (anvil_py/task_server.py, trusted) and a candidate worker
(untrusted) use these helpers. Each message is one datagram of a SOCK_SEQPACKET socket pair: JSON text, with the
descriptors it names attached (SCM_RIGHTS). A tensor on the CPU travels as a memfd of its own holding its bytes and
nothing else, its size sealed; a tensor on a CUDA device as an allocation of its own in device memory
(anvil_py/device_buffers.py), its entry marked `"memory": "cuda"`. The receiver maps it, and the sender never reads
an input it sent again.
"""

import ctypes
import errno
import fcntl
import json
import math
import mmap
import os
import socket

import torch

from anvil_py import device_buffers, tensor_io

MAX_MESSAGE = 1 << 16
MAX_FDS = 253  # SCM_MAX_FD


class ChannelError(Exception):
    """The other side broke the protocol, or went away."""


class ChannelClosed(ChannelError):
    """The other side closed its end."""


class OutputUnreadable(Exception):
    """An output's memory could not be read by the kernel when the worker handed it over (its pages unmapped or
    protected after the call returned: work left to a fault handler): `names`."""

    def __init__(self, names):
        super().__init__(", ".join(names))
        self.names = names


def send(sock, message, fds=()):
    data = json.dumps(message).encode()
    if len(data) > MAX_MESSAGE:
        raise ChannelError(f"message of {len(data)} bytes is over the channel's {MAX_MESSAGE}")
    if fds:
        socket.send_fds(sock, [data], list(fds))
    else:
        sock.sendall(data)


def receive(sock, max_fds=0):
    """(message, fds): a JSON object and the descriptors that came with it. ChannelError at end of file, on a
    message that is not a JSON object, or when more descriptors came than `max_fds` (all closed then)."""
    try:
        data, fds, flags, _ = socket.recv_fds(sock, MAX_MESSAGE, max(max_fds, 1))
    except OSError as e:
        raise ChannelError(f"the channel failed: {e}") from None
    if max_fds == 0 and fds or flags & socket.MSG_CTRUNC:
        for fd in fds:
            os.close(fd)
        if flags & socket.MSG_CTRUNC and max_fds > 0:
            try:
                os.close(os.dup(sock.fileno()))
            except OSError as e:
                if e.errno == errno.EMFILE:  # No room for the descriptors sent: say so.
                    raise ChannelError(f"the descriptors sent could not be received: {e}") from None
                raise
            raise ChannelError("more descriptors came than expected")
        raise ChannelError("descriptors came where none were expected")
    if not data:
        for fd in fds:
            os.close(fd)
        raise ChannelClosed("the other side closed the channel")
    try:
        message = json.loads(data)
    except ValueError:
        message = None
    if not isinstance(message, dict):
        for fd in fds:
            os.close(fd)
        raise ChannelError("a message that is not a JSON object")
    return message, fds


def _cuda_index(device):
    device = torch.device(device)
    return device.index if device.index is not None else torch.cuda.current_device()


def _describe(name, value):
    entry = {"name": name, "dtype": tensor_io.dtype_name(value.dtype), "shape": list(value.shape)}
    if value.is_cuda:
        entry["memory"] = "cuda"
    return entry


def export(tensor, name):
    """(fd, mapping): a descriptor of memory of its own holding `tensor`'s bytes and nothing else, and what must
    live until the descriptor is sent (None for a memfd). For a CPU tensor a sealed memfd: its size is the
    tensor's, and it can neither grow nor shrink. For a CUDA tensor an allocation of its own on its device, the copy
    finished before this returns."""
    if tensor.is_cuda:
        fd, buffer = device_buffers.new_buffer(_cuda_index(tensor.device), tensor.dtype, list(tensor.shape))
        buffer.copy_(tensor.detach())
        torch.cuda.current_stream(tensor.device).synchronize()
        return fd, buffer
    t = tensor.detach().contiguous().cpu()
    size = t.numel() * t.element_size()
    fd = os.memfd_create(f"anvil-{name}", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(fd, size)
        if size:
            with mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE) as m:
                torch.frombuffer(m, dtype=torch.uint8).copy_(t.reshape(-1).view(torch.uint8))
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
    except BaseException:
        os.close(fd)
        raise
    return fd, None


def output_buffer(name, dtype, shape, device="cpu"):
    """(fd, tensor): a zeroed buffer of its own for one output, and this side's mapping of it: a sealed memfd, or
    on a CUDA `device` an allocation of its own there."""
    if torch.device(device).type == "cuda":
        return device_buffers.new_buffer(_cuda_index(device), dtype, list(shape))
    size = dtype.itemsize * math.prod(shape)
    fd = os.memfd_create(f"anvil-{name}", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(fd, size)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
        if size == 0:
            return fd, torch.empty(shape, dtype=dtype)
        m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    except BaseException:
        os.close(fd)
        raise
    return fd, torch.frombuffer(m, dtype=torch.uint8).view(dtype).reshape(shape)


def send_tensors(sock, named_values, outputs=()):
    """[(name, value)] as one message: tensors as descriptors in order (export), other values as JSON scalars; then,
    for each of `outputs` [(name, dtype, shape, device)], an empty buffer the receiver writes. Returns [(name, this
    side's mapping)] of the output buffers."""
    entries, fds, buffers, sent = [], [], [], []
    try:
        for name, value in named_values:
            if isinstance(value, torch.Tensor):
                entries.append(_describe(name, value))
                if value.numel():
                    fd, mapping = export(value, name)
                    fds.append(fd)
                    sent.append(mapping)
            else:
                entries.append({"name": name, "scalar": tensor_io.to_json_value(value)})
        described = []
        for name, dtype, shape, device in outputs:
            fd, mapped = output_buffer(name, dtype, shape, device)
            if mapped.numel():
                fds.append(fd)
            else:
                os.close(fd)
            buffers.append((name, mapped))
            described.append(_describe(name, mapped))
        if len(fds) > MAX_FDS:
            raise ChannelError(f"{len(fds)} tensors in one message; the channel passes at most {MAX_FDS}")
        message = {"tensors": entries}
        if outputs:
            message["outputs"] = described
        send(sock, message, fds)
    finally:
        for fd in fds:
            os.close(fd)
    return buffers


_WEIGHT_ALIGN = 256  # Bytes: each weight's offset in the packed buffer (any dtype's alignment, and the GPU's).


def send_weights(sock, named_tensors):
    """The reference's weights [(name, tensor, in_state_dict)] as one message with one buffer of its own holding all
    of them back to back (a weight per allocation would cost the device's 2 MiB granularity each, and a model can
    have more weights than a message has descriptors), and their layout: name, dtype, shape, byte offset, whether
    the state dict holds it, as JSON in a sealed memfd of its own (level 3's DenseNet201 needs 76 KB, over a
    message's 64 KiB). Returns this side's mapping of the buffer. The weights are no secret: the candidate computes
    with them."""
    layout, offset = [], 0
    for name, tensor, in_state in named_tensors:
        offset = -(-offset // _WEIGHT_ALIGN) * _WEIGHT_ALIGN
        layout.append({"name": name, "dtype": tensor_io.dtype_name(tensor.dtype), "shape": list(tensor.shape),
                       "offset": offset, "state": bool(in_state)})
        offset += tensor.numel() * tensor.element_size()
    device = next((t.device for _, t, _ in named_tensors), torch.device("cpu"))
    # Written straight into the buffer that is sent (zeroed between weights): no second copy of GBs of weights.
    fd, packed = output_buffer("weights", torch.uint8, [max(offset, 1)], device)
    layout_fd = None
    try:
        for (_, tensor, _), entry in zip(named_tensors, layout):
            n = tensor.numel() * tensor.element_size()
            if n:
                src = tensor.detach().contiguous().reshape(-1).view(torch.uint8)
                packed[entry["offset"]:entry["offset"] + n].copy_(src)
        if packed.is_cuda:
            torch.cuda.current_stream(packed.device).synchronize()  # Written before the descriptor leaves.
        text = torch.frombuffer(bytearray(json.dumps(layout).encode()), dtype=torch.uint8)
        layout_fd, _ = export(text, "weights-layout")
        send(sock, {"tensors": [_describe("weights", packed), _describe("layout", text)]}, [fd, layout_fd])
    finally:
        os.close(fd)
        if layout_fd is not None:
            os.close(layout_fd)
    return packed


def receive_weights(sock, device="cpu"):
    """send_weights' message: {name: tensor} (views of one buffer, on `device` when it is where they came) and the
    names the state dict holds, in order. ChannelError on a reply that says so or a layout that does not fit."""
    message, fds = receive(sock, MAX_FDS)
    fds = list(fds)
    try:
        if "error" in message:
            raise ChannelError(f"anvil's task server refused: {message['error']}")
        entries = message.get("tensors", [])
        if [e.get("name") for e in entries] != ["weights", "layout"] or entries[1].get("dtype") != "uint8":
            raise ChannelError("a weights message holds the buffer and its layout")
        (_, packed), (_, text) = _mapped_entries(entries, fds, None)
        if fds:
            raise ChannelError("more descriptors than tensors")
    finally:
        for fd in fds:
            os.close(fd)
    try:
        layout = json.loads(text.numpy().tobytes())
    except ValueError as e:
        raise ChannelError(f"the weights' layout is not JSON: {e}") from None
    if not isinstance(layout, list) or not all(isinstance(e, dict) for e in layout):
        raise ChannelError("the weights' layout is not a list of entries")
    if packed.device.type == "cpu" and torch.device(device).type != "cpu":
        packed = packed.to(device)
    weights, state = {}, []
    for entry in layout:
        dtype = tensor_io.dtype_from_name(entry["dtype"])
        n = dtype.itemsize * math.prod(entry["shape"])
        if not 0 <= entry["offset"] <= entry["offset"] + n <= packed.numel():
            raise ChannelError(f"weight {entry['name']!r} lies outside the buffer")
        weights[entry["name"]] = packed[entry["offset"]:entry["offset"] + n].view(dtype).reshape(entry["shape"])
        if entry.get("state"):
            state.append(entry["name"])
    return weights, state


def send_input_buffers(sock, named_values, before_send=None):
    """[(name, value)] as one message of empty buffers the sender fills later (a timed call's input set, written
    after the worker's `ready`): each tensor a zeroed, sealed memfd of its own that this side keeps mapped; other
    values as JSON scalars. Returns [(this side's mapping, value)] of the tensors, which `before_send` also gets
    before the message goes (the receiver may ask for them to be filled as soon as it has it)."""
    entries, fds, buffers = [], [], []
    try:
        for name, value in named_values:
            if not isinstance(value, torch.Tensor):
                entries.append({"name": name, "scalar": tensor_io.to_json_value(value)})
                continue
            entries.append(_describe(name, value))
            fd, mapped = output_buffer(name, value.dtype, list(value.shape), value.device)
            if mapped.numel():
                fds.append(fd)
                buffers.append((mapped, value))
            else:
                os.close(fd)
        if len(fds) > MAX_FDS:
            raise ChannelError(f"{len(fds)} tensors in one message; the channel passes at most {MAX_FDS}")
        if before_send is not None:
            before_send(buffers)
        send(sock, {"tensors": entries, "written": True}, fds)
    finally:
        for fd in fds:
            os.close(fd)
    return buffers


def map_tensor(fd, dtype, shape):
    """The memfd's bytes as a tensor of `dtype` and `shape`, mapped (shared: writes land in this copy only, which
    no one else reads). The descriptor is closed; the mapping stays as long as the tensor does."""
    try:
        size = os.fstat(fd).st_size
        want = tensor_io.dtype_from_name(dtype).itemsize
        for d in shape:
            want *= d
        if size != want:
            raise ChannelError(f"a tensor of {want} bytes came in {size}")
        m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    finally:
        os.close(fd)
    return torch.frombuffer(m, dtype=torch.uint8).view(tensor_io.dtype_from_name(dtype)).reshape(shape)


def _import_cuda(fd, entry, device):
    """A device allocation's descriptor (closed here) mapped on this process's CUDA device as the entry's tensor:
    the sender's memory itself, which no one else writes."""
    device = torch.device("cuda") if device is None or torch.device(device).type != "cuda" else torch.device(device)
    try:
        return device_buffers.import_buffer(fd, _cuda_index(device), tensor_io.dtype_from_name(entry["dtype"]),
                                            entry["shape"])
    except device_buffers.DeviceBufferError as e:
        raise ChannelError(f"a tensor in device memory could not be mapped: {e}") from None
    finally:
        os.close(fd)


def _mapped_entries(entries, fds, device, keep_fds=None):
    """[(name, value)]: tensors mapped from `fds` in order (on `device`; None: the mapping itself). `keep_fds`: a
    list that gets each tensor's descriptor too (None for an empty one or one in device memory), left open."""
    values = []
    for entry in entries:
        if "scalar" in entry:
            values.append((entry["name"], tensor_io.from_json_value(entry["scalar"])))
            continue
        dtype = tensor_io.dtype_from_name(entry["dtype"])
        if not all(isinstance(d, int) and d >= 0 for d in entry["shape"]):
            raise ChannelError(f"malformed shape {entry['shape']!r}")
        if 0 in entry["shape"]:
            t = torch.empty(entry["shape"], dtype=dtype)
            if keep_fds is not None:
                keep_fds.append(None)
        else:
            if not fds:
                raise ChannelError("fewer descriptors than tensors")
            fd = fds.pop(0)
            if entry.get("memory") == "cuda":
                if keep_fds is not None:
                    keep_fds.append(None)
                t = _import_cuda(fd, entry, device)
                values.append((entry["name"], t if device is None else t.to(device)))
                continue
            if keep_fds is not None:
                keep_fds.append(fd)
                fd = os.dup(fd)
            t = map_tensor(fd, entry["dtype"], entry["shape"])
        values.append((entry["name"], t if device is None else t.to(device)))
    return values


def receive_tensors(sock, device="cpu", with_outputs=False):
    """send_tensors' message: [(name, value)], tensors on `device`; with_outputs: ([(name, value)], [(name, output
    buffer)]), the buffers mapped here. ChannelError on a reply that says so."""
    message, fds = receive(sock, MAX_FDS)
    fds = list(fds)
    try:
        if "error" in message:
            raise ChannelError(f"anvil's task server refused: {message['error']}")
        values = _mapped_entries(message.get("tensors", []), fds, device)
        kept = []
        buffers = _mapped_entries(message.get("outputs", []), fds, None, kept) if with_outputs else []
        buffers = [(name, t, fd) for (name, t), fd in zip(buffers, kept)]
        if fds:
            raise ChannelError("more descriptors than tensors")
        return (values, buffers) if with_outputs else values
    finally:
        for fd in fds:
            os.close(fd)


_WRITE_CHUNK = 1 << 30


def _write_into(fd, out):
    """`out`'s bytes into the memfd `fd` from offset 0, by the kernel; False when it could not read them (EFAULT)."""
    src = out.detach()
    src = (src.cpu() if src.device.type != "cpu" else src).contiguous()
    n = src.numel() * src.element_size()
    view = memoryview((ctypes.c_char * n).from_address(src.data_ptr())).cast("B")
    done = 0
    while done < n:
        try:
            done += os.pwrite(fd, view[done:done + _WRITE_CHUNK], done)
        except OSError as e:
            if e.errno == errno.EFAULT:
                return False
            raise
    return True


class TrialData:
    """The candidate worker's side: asks the task server for each trial's inputs (`--data-fd`) and, when the server
    compares, hands it each trial's outputs in the buffers it sent."""

    def __init__(self, fd):
        self.sock = socket.socket(fileno=fd)
        hello, _ = receive(self.sock)
        self.trials = int(hello.get("trials", 0))
        self.compares = bool(hello.get("compare", False))
        # The input sets of the timed calls it serves, and whether it writes each one into its buffers itself after
        # the worker's `ready` (docs/protocol.md, "timed sets").
        self.sets = int(hello.get("sets", 0))
        self.sets_written = bool(hello.get("sets_written", False))
        self.held_out = int(hello.get("held_out", 0))  # Held-out sets it serves (and compares).
        # Whether it takes the timed sets' rechecked outputs too (docs/protocol.md, "rechecks"); if not, none are.
        self.rechecks = bool(hello.get("rechecks", False))
        self.offers_weights = bool(hello.get("weights", False))  # The reference's weights, once (send_weights).
        # Where the reference's __init__ ran ("cuda", "cpu"; None: no reference): ModelNew's runs there too, so that
        # one that computes on its own weights makes them as the reference did.
        self.init_on = hello.get("init_on")
        self.buffers = {}

    def weights(self, device):
        """The reference's weights: ({name: tensor on `device`}, the state dict's names in order)."""
        send(self.sock, {"get": "weights", "k": 0})
        return receive_weights(self.sock, device)

    def inputs(self, kind, k, device):
        """Trial k's inputs ("trial"; with buffers for its outputs when the server compares), or fresh copies of them
        for the timed calls ("timing")."""
        send(self.sock, {"get": kind, "k": k})
        values, buffers = receive_tensors(self.sock, device, with_outputs=True)
        if kind in ("trial", "held_out"):
            self.buffers[(kind, k)] = buffers
        return [v for _, v in values]

    def timed_set(self, k, device):
        """A copy of the timed calls' input set k, on `device` (a session whose sets are not written per call)."""
        send(self.sock, {"get": "set", "k": k})
        return [v for _, v in receive_tensors(self.sock, device)]

    def call_inputs(self, k):
        """The buffers of timed call k (sets_written): empty until the server writes the call's set into them, after
        the worker's `ready` for it."""
        send(self.sock, {"get": "call", "k": k})
        return [v for _, v in receive_tensors(self.sock, None)]

    def recheck(self, k, outputs):
        """Timed set k's last outputs as anvil's recheck compares them (of a large output, the elements the seed
        drew), into buffers the server sends for them, then compared there."""
        send(self.sock, {"get": "recheck", "k": k})
        _, buffers = receive_tensors(self.sock, None, with_outputs=True)
        self.buffers[("recheck", k)] = buffers
        self.done(k, outputs, kind="recheck")

    def done(self, k, outputs, kind="trial"):
        """Copies trial k's outputs into the server's buffers (a count, shape or dtype other than the reference's is
        said instead, for the server to judge) and waits until the server has compared them. The copy is the
        kernel's (pwrite into the buffer's memfd), as a file's write would be: an output whose pages the candidate
        unmapped or protected after its call raises OutputUnreadable instead of running its fault handler."""
        buffers = self.buffers.pop((kind, k))
        problem = ""
        unreadable = []
        try:
            if len(outputs) != len(buffers):
                problem = f"output count: {len(outputs)} outputs where the reference has {len(buffers)}"
            for (name, buffer, fd), out in zip(buffers, outputs):
                if problem:
                    break
                if list(out.shape) != list(buffer.shape):
                    problem = f"shape: {name} is {list(out.shape)} where the reference's is {list(buffer.shape)}"
                elif out.dtype != buffer.dtype:
                    problem = f"dtype: {name} is {out.dtype} where the reference's is {buffer.dtype}"
                elif buffer.is_cuda:
                    buffer.copy_(out.detach())  # Device memory: copied on the device, the copy finished below.
                elif fd is not None and not _write_into(fd, out):
                    unreadable.append(name)
            if any(buffer.is_cuda for _, buffer, _ in buffers):
                torch.cuda.synchronize()
        finally:
            for _, _, fd in buffers:
                if fd is not None:
                    os.close(fd)
        buffers = None
        if unreadable:
            raise OutputUnreadable(unreadable)
        message = {"done": k, "problem": problem} if problem else {"done": k}
        if kind != "trial":
            message["set"] = kind
        send(self.sock, message)
        reply, _ = receive(self.sock)
        if reply.get("compared") != k:
            raise ChannelError(f"anvil's task server refused: {reply.get('error', reply)}")
