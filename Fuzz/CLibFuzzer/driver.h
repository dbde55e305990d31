#ifndef PUSHHUB_CLIBFUZZER_DRIVER_H
#define PUSHHUB_CLIBFUZZER_DRIVER_H
/* libFuzzer's driver (compiler-rt FuzzerInterface.h), linked by -sanitize=fuzzer: parses the
   -flags, then calls UserCb with each input. pushhub-fuzz's main hands control to it. */
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));
#endif
