/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The dashboard's files: the one list in web/CMakeLists.txt
 * (TWL_WEB_FILES), which also decides what is staged and what the package
 * installs, generated into a C table at build time (web_files.cmake).
 * The static handler serves these paths and nothing else.
 */
#ifndef TWL_SERVER_WEB_FILES_H
#define TWL_SERVER_WEB_FILES_H

#include <stddef.h>

/* Paths relative to the web root ("index.html", "js/api.js"), sorted. */
extern const char *const twl_web_files[];
extern const size_t twl_web_n_files;

#endif /* TWL_SERVER_WEB_FILES_H */
