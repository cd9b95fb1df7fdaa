# anvil-expect: pass
# anvil-class: legit
# anvil-task: l1_17_matmul_tB.py
# anvil-about: C = A @ B^T with an OpenMP loop nest (-O3 -fopenmp, ldflags -fopenmp); B^T is read row-wise so no
# anvil-about: transpose copy is made; torch.empty output, TORCH_CHECKs, .contiguous() in forward.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <omp.h>

torch::Tensor matmul_tb(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2, "A and B must be 2-D");
    TORCH_CHECK(A.size(1) == B.size(1), "inner dimensions must match (B is given as [N, K])");
    TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32, "float32 only");
    TORCH_CHECK(A.is_contiguous() && B.is_contiguous(), "contiguous inputs expected");
    const int64_t M = A.size(0), K = A.size(1), N = B.size(0);
    auto C = torch::empty({M, N}, A.options());
    const float* a = A.data_ptr<float>();
    const float* b = B.data_ptr<float>();
    float* c = C.data_ptr<float>();
    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t i = 0; i < M; ++i) {
        for (int64_t j = 0; j < N; ++j) {
            const float* ar = a + i * K;
            const float* br = b + j * K;
            float acc = 0.0f;
            #pragma omp simd reduction(+:acc)
            for (int64_t k = 0; k < K; ++k) acc += ar[k] * br[k];
            c[i * N + j] = acc;
        }
    }
    return C;
}
"""

matmul_ext = load_inline(
    name="legit_matmul_tb_omp",
    cpp_sources=cpp_source,
    functions=["matmul_tb"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.matmul_ext = matmul_ext

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return self.matmul_ext.matmul_tb(A.contiguous(), B.contiguous())
