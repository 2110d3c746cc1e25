package flagx

// ArithUsage is the help text of the runtime commands' --arith flag
// (runtime.Options.Arith).
const ArithUsage = "arithmetic of the graph outside the matrix products: bitnet.cpp, mainline (llama.cpp, flash attention, F16 KV cache), ik (ik_llama.cpp) (default: the file's home runtime: ik for IQ1_BN/IQ2_BN, mainline for Q2_0 or an arch bitnet.cpp lacks, else bitnet.cpp)"
