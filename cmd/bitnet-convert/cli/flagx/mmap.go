package flagx

// NoMmapUsage is the help text of the runtime commands' --no-mmap flag
// (llama.cpp's, with the same meaning; runtime.Options.NoMmap).
const NoMmapUsage = "read the model file into memory instead of memory-mapping it, as llama.cpp's --no-mmap (on Linux the memory is advised to use 2 MiB pages); costs the file's size in memory, same results"
