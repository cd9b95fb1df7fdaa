"""slime.rollout.data_source at 624b824a: the groups a rollout gets and the buffer served first (see
../../README.md)."""

import copy

from slime.utils.types import Sample


class RolloutDataSource:
    def __init__(self, args):
        self.args = args
        self.sample_group_index = 0
        self.sample_index = 0
        self.sample_offset = 0
        self.prompts = list(getattr(args, "prompt_samples", []))

    def get_samples(self, num_samples):
        prompt_samples = []
        for _ in range(num_samples):
            prompt_samples.append(self.prompts[self.sample_offset % len(self.prompts)] if self.prompts else Sample())
            self.sample_offset += 1
        samples = []
        for prompt_sample in prompt_samples:
            group = []
            for _ in range(self.args.n_samples_per_prompt):
                sample = copy.deepcopy(prompt_sample)
                sample.group_index = self.sample_group_index
                sample.index = self.sample_index
                self.sample_index += 1
                group.append(sample)
            self.sample_group_index += 1
            samples.append(group)
        return samples


class RolloutDataSourceWithBuffer(RolloutDataSource):
    def __init__(self, args):
        super().__init__(args)
        self.buffer = []

    def get_samples(self, num_samples):
        samples = self.buffer[:num_samples]
        self.buffer = self.buffer[num_samples:]
        num_samples -= len(samples)
        if num_samples == 0:
            return samples
        return samples + super().get_samples(num_samples=num_samples)

    def add_samples(self, samples):
        for group in samples:
            assert len(group) == self.args.n_samples_per_prompt
            self.buffer.append(group)
