# ptxgen_add_kernels: kernel specs to cubins (or fatbins) at build time, embedded in a static
# library with a C header, so a program links its kernels like any other code.
#
#   ptxgen_add_kernels(TARGET <library>
#                      SPECS <spec.json>...
#                      [TARGETS <sm_...>...]      # several: one fatbin per spec; default: the spec's own target
#                      [OUTPUT_DIR <dir>])        # default: ${CMAKE_CURRENT_BINARY_DIR}/<library>
#
# For each spec NAME.json (NAME a C identifier) the library defines
#   const unsigned char <library>_NAME_image[];  const size_t <library>_NAME_size;
# and a table `const struct <library>_kernel <library>_kernels[]` of {name, entry, targets, image,
# size} with `<library>_kernel_count` entries; <library>.h (include directory: OUTPUT_DIR) declares
# them. The images are what cuModuleLoadData takes.
#
# It also defines the INTERFACE library <library>_launch: link it and include <library>_launch.hpp,
# the C++17 launch header `ptxgen build SPEC... --header` writes for the same specs and targets
# (typed functions ptxgen::NAME(...) that check their arguments, load the module, encode the
# tensor maps and launch; docs/build.md). It brings the include directory, C++17 and CUDA's
# driver library (CUDA::cuda_driver, from find_package(CUDAToolkit) when the project has not
# called it). The header is generated only when something links <library>_launch.
#
# The ptxgen command is ${PTXGEN_EXECUTABLE}
# (find_package(ptxgen) sets it; from a source tree, set it to the built ptxgen and include() this
# file). ptxgen writes a depfile, so a spec's build reruns exactly when something it read changed.
# (Not cmake_minimum_required: in an included file it would reset the including project's policies.)
if(CMAKE_VERSION VERSION_LESS 3.20)
  message(FATAL_ERROR "ptxgen_add_kernels needs CMake 3.20 (DEPFILE with every generator), not ${CMAKE_VERSION}")
endif()

set(_PTXGEN_EMBED_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/PtxgenEmbed.cmake")

function(ptxgen_add_kernels)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "TARGET;OUTPUT_DIR" "SPECS;TARGETS")
  if(NOT arg_TARGET OR NOT arg_SPECS)
    message(FATAL_ERROR "ptxgen_add_kernels: TARGET <library> and SPECS <spec.json>... are required")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ptxgen_add_kernels: unexpected arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT PTXGEN_EXECUTABLE)
    message(FATAL_ERROR "ptxgen_add_kernels: PTXGEN_EXECUTABLE is not set (find_package(ptxgen) sets it)")
  endif()
  get_property(_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "C" IN_LIST _languages)
    message(FATAL_ERROR "ptxgen_add_kernels: the embedded images are C sources: enable C in project()")
  endif()
  set(lib "${arg_TARGET}")
  if(NOT lib MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "ptxgen_add_kernels: TARGET ${lib} must be a C identifier (it prefixes the symbols)")
  endif()
  set(dir "${arg_OUTPUT_DIR}")
  if(NOT dir)
    set(dir "${CMAKE_CURRENT_BINARY_DIR}/${lib}")
  endif()
  file(MAKE_DIRECTORY "${dir}")

  set(target_args "")
  foreach(t IN LISTS arg_TARGETS)
    list(APPEND target_args --target ${t})
  endforeach()
  list(LENGTH arg_TARGETS n_targets)
  list(JOIN arg_TARGETS ", " target_text)
  if(n_targets EQUAL 0)
    set(target_text "-")  # PtxgenEmbed.cmake reads each spec's own
  endif()

  set(images "")
  set(specs "")
  set(decls "")
  set(embed_list "")
  foreach(spec IN LISTS arg_SPECS)
    get_filename_component(spec "${spec}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_filename_component(name "${spec}" NAME_WE)
    if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
      message(FATAL_ERROR "ptxgen_add_kernels: ${spec}: the file name must be a C identifier")
    endif()
    if(n_targets GREATER 1)
      set(image "${dir}/${name}.fatbin")
      set(outputs "${image}" "${dir}/${name}.manifest.json")
    else()
      set(image "${dir}/${name}.cubin")
      set(outputs "${image}" "${dir}/${name}.ptx" "${dir}/${name}.manifest.json")
    endif()
    # The depfile names absolute paths: have CMake translate them for Ninja whatever the calling
    # project's cmake_minimum_required (CMP0116).
    cmake_policy(PUSH)
    cmake_policy(SET CMP0116 NEW)
    add_custom_command(
      OUTPUT ${outputs}
      COMMAND "${PTXGEN_EXECUTABLE}" build "${spec}" ${target_args} -o "${image}" --depfile "${dir}/${name}.d" -q
      MAIN_DEPENDENCY "${spec}"
      DEPENDS "${PTXGEN_EXECUTABLE}"
      DEPFILE "${dir}/${name}.d"
      COMMENT "ptxgen: ${name}"
      VERBATIM)
    cmake_policy(POP)
    list(APPEND images "${image}")
    list(APPEND specs "${spec}")
    string(APPEND decls
      "extern const unsigned char ${lib}_${name}_image[]; /* ${name}.json */\n"
      "extern const size_t ${lib}_${name}_size;\n")
    string(APPEND embed_list "  \"${name}\" \"${spec}\" \"${image}\"\n")
  endforeach()

  # The header and the list of images depend only on file names known now: written at configure time,
  # and only when they change (file(CONFIGURE)), so a reconfigure rebuilds nothing.
  file(CONFIGURE OUTPUT "${dir}/${lib}.h" @ONLY CONTENT
"/* Generated by ptxgen_add_kernels(TARGET ${lib}). Do not edit. */
#pragma once
#include <stddef.h>

#ifdef __cplusplus
extern \"C\" {
#endif

${decls}
struct ${lib}_kernel {
  const char* name;           /* the spec's file name */
  const char* entry;          /* the kernel's .entry, for cuModuleGetFunction */
  const char* targets;        /* what the image holds code for */
  const unsigned char* image; /* cubin or fatbin, for cuModuleLoadData */
  size_t size;
};
extern const struct ${lib}_kernel ${lib}_kernels[];
extern const size_t ${lib}_kernel_count;

#ifdef __cplusplus
}
#endif
")
  file(CONFIGURE OUTPUT "${dir}/${lib}_images.cmake" @ONLY CONTENT
"# Read by PtxgenEmbed.cmake: the spec's file name, the spec, its image, per kernel.
set(PTXGEN_LIBRARY \"${lib}\")
set(PTXGEN_TARGETS \"${target_text}\")
set(PTXGEN_KERNELS
${embed_list})
")
  # One C source holds every image and the table: the table's sizes are then constants.
  add_custom_command(
    OUTPUT "${dir}/${lib}.c"
    COMMAND "${CMAKE_COMMAND}" "-DLIST=${dir}/${lib}_images.cmake" "-DOUTPUT=${dir}/${lib}.c"
            -P "${_PTXGEN_EMBED_SCRIPT}"
    DEPENDS ${images} ${specs} "${dir}/${lib}_images.cmake" "${_PTXGEN_EMBED_SCRIPT}"
    COMMENT "ptxgen: embedding ${lib}'s images"
    VERBATIM)

  add_library(${lib} STATIC "${dir}/${lib}.c")
  target_include_directories(${lib} PUBLIC "${dir}")
  target_compile_features(${lib} PRIVATE c_std_11)

  # The launch header: one ptxgen command for every spec (each target's cubin embedded).
  set(header "${dir}/${lib}_launch.hpp")
  cmake_policy(PUSH)
  cmake_policy(SET CMP0116 NEW)
  add_custom_command(
    OUTPUT "${header}"
    COMMAND "${PTXGEN_EXECUTABLE}" build ${specs} ${target_args} --header "${header}" --depfile "${dir}/${lib}_launch.d" -q
    DEPENDS ${specs} "${PTXGEN_EXECUTABLE}"
    DEPFILE "${dir}/${lib}_launch.d"
    COMMENT "ptxgen: ${lib}_launch.hpp"
    VERBATIM)
  cmake_policy(POP)
  add_custom_target(${lib}_launch_header DEPENDS "${header}")
  add_library(${lib}_launch INTERFACE)
  add_dependencies(${lib}_launch ${lib}_launch_header)
  target_include_directories(${lib}_launch INTERFACE "${dir}")
  target_compile_features(${lib}_launch INTERFACE cxx_std_17)
  if(NOT TARGET CUDA::cuda_driver)
    find_package(CUDAToolkit QUIET)
  endif()
  if(TARGET CUDA::cuda_driver)
    target_link_libraries(${lib}_launch INTERFACE CUDA::cuda_driver)
  endif()
endfunction()
