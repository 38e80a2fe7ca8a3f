# Debian packages built by CPack from this build (see README "Packages"):
#   cmake -S . -B build/pkg -DCMAKE_BUILD_TYPE=Release -DTWILIGHT_PACKAGE=ON
#   cmake --build build/pkg -j2 && (cd build/pkg && cpack -G DEB)
# Two components, one .deb each: twilight-agent and twilight-server. Runtime
# dependencies come from dpkg-shlibdeps (the shared libraries each binary
# links), so they are right for the Debian release the packages are built on.
# Only the components "agent" and "server" are packaged; install() rules
# without a COMPONENT (e.g. in agent/ or server/) never reach a package.
include(GNUInstallDirs)

# TWILIGHT_PACKAGE=ON builds binaries fit for installing: the server's
# default web root is /usr/share/twilight/web instead of this build tree
# (server/CMakeLists.txt). cpack refuses to package any other build.
option(TWILIGHT_PACKAGE "Build for the Debian packages (installed paths, no sanitizers)" OFF)

set(TWL_PKG_DIR ${PROJECT_SOURCE_DIR}/packaging)
set(TWL_PKG_BUILD ${PROJECT_BINARY_DIR}/packaging)

# Package builds get Debian's hardening (what dpkg-buildflags gives with
# hardening=+all): fortified libc calls, stack protector, full RELRO and
# immediate binding, on every library and binary that goes into a package.
if(TWILIGHT_PACKAGE)
	foreach(dir schema common agent agent/bpf server)
		if(NOT EXISTS ${PROJECT_SOURCE_DIR}/${dir}/CMakeLists.txt)
			continue()
		endif()
		get_property(tgts DIRECTORY ${PROJECT_SOURCE_DIR}/${dir} PROPERTY BUILDSYSTEM_TARGETS)
		foreach(t ${tgts})
			get_target_property(type ${t} TYPE)
			if(type STREQUAL "STATIC_LIBRARY" OR type STREQUAL "EXECUTABLE")
				target_compile_options(${t} PRIVATE -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2
					-fstack-protector-strong -fstack-clash-protection -fcf-protection)
			endif()
			if(type STREQUAL "EXECUTABLE")
				target_link_options(${t} PRIVATE -Wl,-z,relro,-z,now)
			endif()
		endforeach()
	endforeach()
endif()

# Manual pages and changelogs are installed gzipped (-n: no name or time
# stamp in the header, so the packages are reproducible).
set(twl_pkg_gz)
function(twl_pkg_gzip src dst)
	add_custom_command(OUTPUT ${dst}
		COMMAND ${CMAKE_COMMAND} -E make_directory ${TWL_PKG_BUILD}
		COMMAND sh -c "gzip -9n -c '${src}' > '${dst}.tmp' && mv '${dst}.tmp' '${dst}'"
		DEPENDS ${src}
		COMMENT "gzip ${src}"
		VERBATIM)
	set(twl_pkg_gz ${twl_pkg_gz} ${dst} PARENT_SCOPE)
endfunction()
twl_pkg_gzip(${PROJECT_SOURCE_DIR}/docs/man/twilight-agent.8 ${TWL_PKG_BUILD}/twilight-agent.8.gz)
twl_pkg_gzip(${PROJECT_SOURCE_DIR}/docs/man/twilight-server.8 ${TWL_PKG_BUILD}/twilight-server.8.gz)
twl_pkg_gzip(${TWL_PKG_DIR}/changelog ${TWL_PKG_BUILD}/changelog.Debian.gz)
add_custom_target(twl_package_files ALL DEPENDS ${twl_pkg_gz})

# Absolute destinations (/etc, /lib) stay absolute in the package; relative
# ones go under CPACK_PACKAGING_INSTALL_PREFIX (/usr). Debian 12 keeps
# system units in /lib/systemd/system.
if(TARGET twilight-agent)
	install(TARGETS twilight-agent RUNTIME DESTINATION sbin COMPONENT agent)
	install(FILES ${PROJECT_SOURCE_DIR}/agent/twilight-agent.service
		DESTINATION /lib/systemd/system COMPONENT agent)
	install(FILES ${PROJECT_SOURCE_DIR}/agent/twilight-agent.conf.example
		DESTINATION /etc/twilight RENAME agent.conf COMPONENT agent)
	install(FILES ${PROJECT_SOURCE_DIR}/agent/twilight-agent.conf.example
		DESTINATION share/doc/twilight-agent COMPONENT agent)
	install(FILES ${TWL_PKG_BUILD}/twilight-agent.8.gz
		DESTINATION share/man/man8 COMPONENT agent)
	install(FILES ${TWL_PKG_DIR}/agent/copyright
		DESTINATION share/doc/twilight-agent COMPONENT agent)
	install(FILES ${TWL_PKG_BUILD}/changelog.Debian.gz
		DESTINATION share/doc/twilight-agent COMPONENT agent)
endif()
if(TARGET twilight-server)
	install(TARGETS twilight-server RUNTIME DESTINATION sbin COMPONENT server)
	install(FILES ${TWL_PKG_DIR}/server/twilight-server.service
		DESTINATION /lib/systemd/system COMPONENT server)
	install(FILES ${PROJECT_SOURCE_DIR}/server/twilight-server.conf.example
		DESTINATION /etc/twilight RENAME server.conf COMPONENT server)
	# The dashboard: exactly the files of TWL_WEB_FILES (web/CMakeLists.txt).
	foreach(f ${TWL_WEB_FILES})
		get_filename_component(d ${f} DIRECTORY)
		install(FILES ${TWL_WEB_ROOT}/${f} DESTINATION share/twilight/web/${d} COMPONENT server)
	endforeach()
	install(FILES ${TWL_PKG_BUILD}/twilight-server.8.gz
		DESTINATION share/man/man8 COMPONENT server)
	install(FILES ${TWL_PKG_DIR}/server/copyright
		DESTINATION share/doc/twilight-server COMPONENT server)
	install(FILES ${TWL_PKG_BUILD}/changelog.Debian.gz
		DESTINATION share/doc/twilight-server COMPONENT server)
	install(FILES ${PROJECT_SOURCE_DIR}/docs/operators-guide.md
		DESTINATION share/doc/twilight-server COMPONENT server)
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME twilight)
set(CPACK_PACKAGE_VENDOR "twilight")
set(CPACK_PACKAGE_CONTACT "twilight maintainers <twilight@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "fleet-wide reporting of deprecated Linux kernel features")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL agent server)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
# Maintainer scripts 0755, conffiles 0644, whatever the source tree says.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_AGENT_PACKAGE_NAME twilight-agent)
set(CPACK_DEBIAN_AGENT_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_AGENT_DESCRIPTION "reports deprecated kernel feature use to a twilight server
 The twilight agent reads the kernel's deprecation warnings from /dev/kmsg,
 takes a census of the cgroup v1 memory controller settings in use and posts
 batches over TLS to a twilight server, keeping them in a bounded spool until
 the server accepted them. It is not started on installation: configure
 /etc/twilight/agent.conf, then enable twilight-agent.service.")
set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_EXTRA
	${TWL_PKG_DIR}/agent/postinst ${TWL_PKG_DIR}/agent/prerm
	${TWL_PKG_DIR}/agent/postrm ${TWL_PKG_DIR}/agent/conffiles)

set(CPACK_DEBIAN_SERVER_PACKAGE_NAME twilight-server)
set(CPACK_DEBIAN_SERVER_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_SERVER_DESCRIPTION "fleet dashboard for deprecated kernel feature use
 The twilight server ingests agent reports over HTTPS into SQLite, serves a
 JSON API and a dashboard of the fleet's exposure to deprecated kernel
 features, and exports the 'report your usecase' summary for linux-mm.")
set(CPACK_DEBIAN_SERVER_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_AGENT_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_SERVER_PACKAGE_SUGGESTS "sqlite3")
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_EXTRA
	${TWL_PKG_DIR}/server/postinst ${TWL_PKG_DIR}/server/prerm
	${TWL_PKG_DIR}/server/postrm ${TWL_PKG_DIR}/server/conffiles)

# Checked when cpack runs, so a development or sanitizer build is never
# packaged by mistake.
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/packaging/cpack-check.cmake)
if(TWILIGHT_PACKAGE AND NOT TWILIGHT_SANITIZE AND NOT TWILIGHT_FUZZ)
	set(twl_pkg_ok 1)
else()
	set(twl_pkg_ok 0)
endif()
file(WRITE ${CPACK_PROJECT_CONFIG_FILE}
	"if(NOT ${twl_pkg_ok} EQUAL 1)\n"
	"  message(FATAL_ERROR \"cpack: this build is not a package build: configure with "
	"-DCMAKE_BUILD_TYPE=Release -DTWILIGHT_PACKAGE=ON (and without sanitizers or fuzzing)\")\n"
	"endif()\n")

include(CPack)
