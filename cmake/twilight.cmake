# Helpers shared by every component's CMakeLists.txt.

# twl_add_unit_test(NAME SOURCES... [LIBS libs...] [LABEL label])
# Builds a cmocka test executable and registers it with ctest under LABEL
# (default "unit").
function(twl_add_unit_test name)
	cmake_parse_arguments(T "" "LABEL;TIMEOUT" "SOURCES;LIBS;ARGS" ${ARGN})
	if(NOT T_LABEL)
		set(T_LABEL unit)
	endif()
	if(NOT T_TIMEOUT)
		set(T_TIMEOUT 300)
	endif()
	add_executable(${name} ${T_SOURCES})
	target_link_libraries(${name} PRIVATE PkgConfig::CMOCKA ${T_LIBS})
	add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
	set_tests_properties(${name} PROPERTIES LABELS ${T_LABEL}
		TIMEOUT ${T_TIMEOUT}
		ENVIRONMENT "TWILIGHT_SOURCE_DIR=${PROJECT_SOURCE_DIR};TWILIGHT_BINARY_DIR=${PROJECT_BINARY_DIR}")
endfunction()

# twl_add_script_test(NAME COMMAND cmd... LABEL label [TIMEOUT s])
# Registers a test that runs a script (integration, guest, browser, package).
function(twl_add_script_test name)
	cmake_parse_arguments(T "" "LABEL;TIMEOUT" "COMMAND" ${ARGN})
	if(NOT T_TIMEOUT)
		set(T_TIMEOUT 600)
	endif()
	add_test(NAME ${name} COMMAND ${T_COMMAND})
	set_tests_properties(${name} PROPERTIES LABELS ${T_LABEL}
		TIMEOUT ${T_TIMEOUT}
		ENVIRONMENT "TWILIGHT_SOURCE_DIR=${PROJECT_SOURCE_DIR};TWILIGHT_BINARY_DIR=${PROJECT_BINARY_DIR}")
endfunction()

# twl_add_fuzzer(NAME SOURCES... [LIBS libs...] CORPUS dir [SECONDS n])
# Only with TWILIGHT_FUZZ=ON (clang): builds a libFuzzer target and a ctest
# (label "fuzz") that runs it for SECONDS (default 60) from a copy of CORPUS.
# Any crash, leak or sanitizer report fails the test.
function(twl_add_fuzzer name)
	if(NOT TWILIGHT_FUZZ)
		return()
	endif()
	cmake_parse_arguments(T "" "CORPUS;SECONDS" "SOURCES;LIBS" ${ARGN})
	if(NOT T_SECONDS)
		set(T_SECONDS 60)
	endif()
	add_executable(${name} ${T_SOURCES})
	target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
	target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
	target_link_libraries(${name} PRIVATE ${T_LIBS})
	set(work ${CMAKE_CURRENT_BINARY_DIR}/${name}-corpus)
	add_test(NAME ${name}
		COMMAND sh -c "rm -rf '${work}' && mkdir -p '${work}' && cp -r '${T_CORPUS}'/. '${work}'/ && exec '$<TARGET_FILE:${name}>' -max_total_time=${T_SECONDS} -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 '${work}'")
	math(EXPR tmo "${T_SECONDS} + 120")
	set_tests_properties(${name} PROPERTIES LABELS fuzz TIMEOUT ${tmo})
endfunction()
