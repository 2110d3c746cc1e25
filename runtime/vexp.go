package runtime

import "github.com/bitnet-convert/bitnet-convert/internal/kernels"

// expVec is e^x as the reference computes it in softmax and SiLU on x86
// AVX2: ggml_v_expf of bitnet.cpp's llama.cpp fork (ggml.c, 406a5036);
// internal/kernels.Exp has the method and the pure-Go code. It is not
// correctly rounded (up to ~1.5 ulp), so using math.Exp instead moves
// single ulps, and those flip later F16 and int8 roundings: on the golden
// tiny model math.Exp leaves logits up to 0.2 away from bitnet.cpp, this
// function reproduces them bit for bit.
func expVec(x float32) float32 { return kernels.Exp(x) }
