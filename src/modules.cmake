# One static library per module (src/<name>/), linked to the modules it
# declares and nothing else. The declarations below are the architecture's
# arrows (docs/architecture.md): a module may use a module below it, never
# one above. Each library also gets a link check, an executable holding every
# object of the library and only its declared modules, so code that reaches
# up a layer (or sideways to an undeclared module) fails the build with the
# missing symbol named.
set(GPUCLEAN_LIB_SOURCES)
set(GPUCLEAN_MODULE_TARGETS)
function(gpuclean_module name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "USES;PRIVATE_LIBS")
  set(target gpuclean_${name})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/${name}/*.cc)
  add_library(${target} STATIC ${sources})
  add_dependencies(${target} gpuclean_schema)
  target_include_directories(${target} PUBLIC
    ${CMAKE_SOURCE_DIR}/include ${GPUCLEAN_GEN_DIR} PRIVATE ${CMAKE_SOURCE_DIR}/src)
  set(uses ${arg_USES})
  list(TRANSFORM uses PREPEND gpuclean_)
  target_link_libraries(${target} PUBLIC ${uses} flatbuffers::flatbuffers nlohmann_json::nlohmann_json fmt::fmt)
  target_link_libraries(${target} PRIVATE ${arg_PRIVATE_LIBS})
  if(CMAKE_BUILD_TYPE STREQUAL "Debug")
    target_compile_definitions(${target} PUBLIC GPUCLEAN_CHECK_INVARIANTS=1)
  endif()
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  gpuclean_warnings(${target})
  gpuclean_unity(${target})
  # The schema header is parsed once for all modules (see GPUCLEAN_PCH_HEADERS),
  # except where OpenMP's flags define _OPENMP: GCC refuses a header
  # precompiled without it.
  if(name STREQUAL "ir" OR arg_PRIVATE_LIBS MATCHES "OpenMP")
    target_precompile_headers(${target} PRIVATE ${GPUCLEAN_PCH_HEADERS})
  else()
    target_precompile_headers(${target} REUSE_FROM gpuclean_ir)
  endif()

  add_executable(${target}_link_check ${CMAKE_SOURCE_DIR}/src/link_check_main.cc)
  target_link_libraries(${target}_link_check PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${target}>")

  set(GPUCLEAN_LIB_SOURCES ${GPUCLEAN_LIB_SOURCES} ${sources} PARENT_SCOPE)
  set(GPUCLEAN_MODULE_TARGETS ${GPUCLEAN_MODULE_TARGETS} ${target} PARENT_SCOPE)
endfunction()

# Debian's libdnnl-dev (oneDNN, OpenMP runtime): CONV_2D's fp32 path
# (src/exec/kernels/onednn.cc, measured there). Without it the interpreter
# runs its own GEMM everywhere, as the sanitizer and fuzz builds do.
# Debian's oneDNN config requires OpenCL (its GPU runtime) and fails the
# configure without it, so look for OpenCL first (ocl-icd-opencl-dev, only
# recommended by libdnnl-dev) and leave oneDNN out where it is missing.
find_package(OpenCL QUIET)
if(OpenCL_FOUND)
  find_package(dnnl CONFIG QUIET)
endif()
find_package(OpenMP QUIET)
set(GPUCLEAN_EXEC_LIBS)
if(dnnl_FOUND AND OpenMP_CXX_FOUND)
  set(GPUCLEAN_EXEC_LIBS DNNL::dnnl OpenMP::OpenMP_CXX)
else()
  message(STATUS "gpuclean: oneDNN (libdnnl-dev) or OpenMP not found; CONV_2D runs gpuclean's own GEMM")
endif()

# Bottom to top. Photograph decoding (libstb) and ONNX protobuf each have one user.
gpuclean_module(ir)
gpuclean_module(common USES ir PRIVATE_LIBS PkgConfig::STB)

gpuclean_module(format USES common)
gpuclean_module(builder USES common)
gpuclean_module(exec USES format builder PRIVATE_LIBS ${GPUCLEAN_EXEC_LIBS})
gpuclean_module(inspect USES format)
gpuclean_module(lint USES format)
gpuclean_module(probe USES format)
gpuclean_module(analyze USES exec probe)

gpuclean_module(latency USES exec probe)
gpuclean_module(rewrite USES lint exec analyze)
gpuclean_module(synth USES lint builder)
gpuclean_module(pipeline USES analyze probe)
gpuclean_module(split USES rewrite pipeline)
gpuclean_module(onnx USES exec PRIVATE_LIBS onnx onnx_proto protobuf::libprotobuf)
gpuclean_module(check USES inspect rewrite probe)
gpuclean_module(recipe USES split)
gpuclean_module(convert USES onnx rewrite probe split recipe)
if(GPUCLEAN_EXEC_LIBS)
  target_compile_definitions(gpuclean_exec PRIVATE GPUCLEAN_WITH_ONEDNN=1)
endif()

# Everything below the CLI, for the programs that use the whole library
# (the CLI, tests, benchmarks, the Python module).
add_library(gpuclean_core INTERFACE)
target_link_libraries(gpuclean_core INTERFACE ${GPUCLEAN_MODULE_TARGETS})

# lint::DefaultDataDir finds data/ here, image::DefaultImagePath the
# photograph setup puts in .cache/images/, the probe the Node harnesses when
# it runs inside another program (the Python module).
set_source_files_properties(${CMAKE_SOURCE_DIR}/src/lint/matrix.cc ${CMAKE_SOURCE_DIR}/src/common/image.cc
  ${CMAKE_SOURCE_DIR}/src/probe/environment.cc
  PROPERTIES COMPILE_DEFINITIONS GPUCLEAN_SOURCE_ROOT="${CMAKE_SOURCE_DIR}")
