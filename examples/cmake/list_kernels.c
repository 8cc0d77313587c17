/* Lists the kernels linked into this program and checks each embedded image against the file it
   was made from (the paths on the command line, in table order). A CUDA program passes
   image to cuModuleLoadData and entry to cuModuleGetFunction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proj.h"
#include "score.h"

static const char* kind(const unsigned char* image) {
  static const unsigned char fatbin[4] = {0x50, 0xed, 0x55, 0xba}, elf[4] = {0x7f, 'E', 'L', 'F'};
  if (memcmp(image, fatbin, 4) == 0) return "fatbin";
  if (memcmp(image, elf, 4) == 0) return "cubin";
  return NULL;
}

static int same_as_file(const unsigned char* image, size_t size, const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return 0;
  }
  unsigned char* buf = malloc(size + 1);
  const size_t n = buf ? fread(buf, 1, size + 1, f) : 0;
  fclose(f);
  const int same = buf && n == size && memcmp(buf, image, size) == 0;
  free(buf);
  return same;
}

/* Prints one kernel; 0 when its image is not a cubin or fatbin or differs from `path`. */
static int show(const char* name, const char* entry, const char* targets, const unsigned char* image, size_t size,
                const char* path) {
  const char* k = kind(image);
  printf("%-22s entry %-22s %-6s %6zu bytes for %s\n", name, entry, k ? k : "?", size, targets);
  int ok = 1;
  if (!k) {
    fprintf(stderr, "%s: the image is neither a cubin nor a fatbin\n", name);
    ok = 0;
  }
  if (path && !same_as_file(image, size, path)) {
    fprintf(stderr, "%s: the image differs from %s\n", name, path);
    ok = 0;
  }
  return ok;
}

int main(int argc, char** argv) {
  int ok = 1, arg = 1;
  for (size_t i = 0; i < proj_kernel_count; ++i, ++arg) {
    const struct proj_kernel* k = &proj_kernels[i];
    ok &= show(k->name, k->entry, k->targets, k->image, k->size, arg < argc ? argv[arg] : NULL);
  }
  for (size_t i = 0; i < score_kernel_count; ++i, ++arg) {
    const struct score_kernel* k = &score_kernels[i];
    ok &= show(k->name, k->entry, k->targets, k->image, k->size, arg < argc ? argv[arg] : NULL);
  }
  if (argc > 1 && arg != argc) {
    fprintf(stderr, "expected %d image files, got %d\n", arg - 1, argc - 1);
    ok = 0;
  }
  return ok ? 0 : 1;
}
