"""BDR for verl (docs/rl.md, "verl"): all-failed groups come back as repair tasks, through the agent loop.

verl 0.9.1 fixes its sampler (create_rl_sampler: random or sequential) and draws its batches in the trainer's
process, possibly in dataloader subprocesses; what a group's samples scored is known only in the agent-loop
workers, spread over Ray actors. So BDR lives where both are seen: one Ray actor per training job (`anvil_bdr`,
made by the first agent loop that needs it, ending with the job) holds a BDRBuffer. Each sample of a group (verl
gives the `n` samples of a prompt one `uid`) asks it once per group whether the group is a repair task: the first
ask of a uid draws (popping the oldest entry with probability `reissue_prob`), the rest get the same answer. Each
sample reports its last answer and verdict; when the group's `n` reports are in and every one failed by its own doing,
the group becomes an entry. Outside Ray (a test, one process) the store is this process's own.

The draws are seeded, but their order is the order in which groups first ask, which an asynchronous rollout does not
fix. The buffer is not saved with verl's checkpoints."""

import collections

from anvil_rl import BDRBuffer

ACTOR = "anvil_bdr"
PENDING = 4096  # groups still awaiting reports; the oldest is dropped past it (a sample that never reported)
CLAIMS = 65536  # uids remembered with their draw


class BDRStore:
    """The buffer and what it needs to see groups whole. Plain Python: Ray makes the actor from it."""

    def __init__(self, capacity, reissue_prob, seed):
        self.buffer = BDRBuffer(capacity=int(capacity), reissue_prob=float(reissue_prob), seed=seed)
        self.claims = collections.OrderedDict()  # uid -> the entry re-issued to its group, or None
        self.groups = collections.OrderedDict()  # uid -> {"task", "samples", "verdicts"}
        self.added = self.reissued = self.dropped = 0

    def claim(self, uid):
        """The repair entry this group (uid) answers instead of its own prompt, or None; the same for every sample
        of the group."""
        if uid not in self.claims:
            drawn = self.buffer.next_repair_prompts(1)
            self.claims[uid] = drawn[0] if drawn else None
            self.reissued += bool(drawn)
            while len(self.claims) > CLAIMS:
                self.claims.popitem(last=False)
        return self.claims[uid]

    def report(self, uid, n, task, answer, verdict):
        """One sample's last answer and verdict (None where the machine failed it). `task` is the group's own
        prompt and ground truth, None for a repair group (it is not added again). When the group's n reports are
        in, returns whether it became an entry; before, False."""
        group = self.groups.get(uid)
        if group is None:
            group = self.groups[uid] = {"task": task, "samples": [], "verdicts": []}
            while len(self.groups) > PENDING:
                self.groups.popitem(last=False)
                self.dropped += 1
        group["samples"].append(answer)
        group["verdicts"].append(verdict if verdict is not None else {"status": "infra_error"})
        if len(group["samples"]) < int(n):
            return False
        del self.groups[uid]
        if group["task"] is None:
            return False
        kept = self.buffer.add_group(group["task"], group["samples"], group["verdicts"])
        self.added += kept
        return kept

    def stats(self):
        return {"entries": len(self.buffer), "added": self.added, "reissued": self.reissued,
                "pending_groups": len(self.groups), "dropped_groups": self.dropped}


class _Local:
    """The store in this process, behind the same awaitable calls as the actor."""

    def __init__(self, store):
        self.store = store

    async def claim(self, uid):
        return self.store.claim(uid)

    async def report(self, *args):
        return self.store.report(*args)


class _Actor:
    def __init__(self, actor):
        self.actor = actor

    async def claim(self, uid):
        return await self.actor.claim.remote(uid)

    async def report(self, *args):
        return await self.actor.report.remote(*args)


_stores = {}


def bdr_store(capacity, reissue_prob, seed):
    """The job's store: the `anvil_bdr` Ray actor where Ray runs (made here if no agent loop made it yet; the first
    maker's settings hold), else this process's own. One handle per process and settings (verl makes an agent loop
    per sample)."""
    try:
        import ray
    except ImportError:
        ray = None
    in_ray = ray is not None and ray.is_initialized()
    key = (in_ray, int(capacity), float(reissue_prob), seed)
    if key not in _stores:
        if in_ray:
            actor = ray.remote(num_cpus=0)(BDRStore).options(name=ACTOR, get_if_exists=True).remote(*key[1:])
            _stores[key] = _Actor(actor)
        else:
            _stores[key] = _Local(BDRStore(*key[1:]))
    return _stores[key]
