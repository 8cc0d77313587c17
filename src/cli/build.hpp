// `ptxgen build`: PTX through ptxas into a cubin and its launch manifest, or, for several targets,
// one fatbin made by the toolkit's fatbinary with a manifest listing each target's entry.
#pragma once

#include <string>
#include <vector>

#include "load.hpp"

namespace ptxgen::cli {

struct BuildOptions {
  std::string out;      // -o: the cubin (one target) or fatbin (several); default NAME.cubin / NAME.fatbin
  std::string out_ptx;  // --ptx: one target only; default the cubin's name with .ptx
  std::string depfile;  // --depfile
  bool quiet = false;   // -q: nothing on standard output when it succeeds (build systems)
  std::string header;   // --header: the launch header for every spec, and nothing else
};

// Every file a build writes, from the options and the targets (docs/build.md).
struct BuildPaths {
  std::string primary;  // the cubin or the fatbin: the depfile's target
  std::string manifest;  // the launch manifest (a fatbin's lists one entry per target)
  struct PerTarget {
    std::string ptx, report;
  };
  std::vector<PerTarget> targets;  // in the order of Loaded::specs
};
BuildPaths build_paths(const Loaded& l, const BuildOptions& o);

// The fatbin manifest (docs/build.md): the fatbin and, per target, that target's launch manifest
// (plan::manifest) with its files. Paths are relative to the manifest's directory, so the text
// depends only on the spec, targets and file names.
std::string fatbin_manifest(const Loaded& l, const BuildPaths& p);

int build(const Loaded& l, const BuildOptions& o);

// `build SPEC... --header FILE`: each spec assembled for each target (no fatbinary: the header
// holds each target's cubin and picks one by the device), the header written (src/cli/header.hpp)
// with the depfile, and nothing else. `producer` is the command line, for the header's first line.
int build_header(const std::vector<Loaded>& specs, const BuildOptions& o, const std::string& producer);

}  // namespace ptxgen::cli
