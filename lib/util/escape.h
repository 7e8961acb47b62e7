/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Names a user chose (group names, cgroup paths) as root's tools print and
 * log them: nothing in them may drive a terminal, reorder or hide what a
 * reader sees, or make two different names print the same.
 *
 * JSON (ag_json_string): valid UTF-8 passes through, except the code points
 * of ag_cp_must_escape, written as \uXXXX (a surrogate pair above U+FFFF);
 * each byte that is not part of valid UTF-8 (0x80-0xff) is written as the
 * lone low surrogate \udcXX, as Python's "surrogateescape" decodes it (PEP
 * 383): no valid UTF-8 text holds a surrogate, so the string gives the
 * name back byte for byte (json.loads(s).encode("utf-8", "surrogateescape")).
 *
 * Logs and text (ag_escape_bytes): every byte outside printable ASCII, and
 * the backslash, as \xNN.
 *
 * Values of key=value records (ag_escape_percent): percent-encoded, so that
 * a value never holds a space, '=' or '"'. */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at p (shortest form, no surrogate, at
 * most U+10FFFF), 0 when invalid; its code point in *ret_cp. p is
 * NUL-terminated. */
size_t ag_utf8_decode(const unsigned char *p, unsigned *ret_cp);

/* Code points never printed raw: C0, DEL and C1 controls; every format
 * character (Unicode category Cf: the soft hyphen, bidi marks, embeddings,
 * overrides and isolates, zero-width spaces and joiners, invisible
 * operators, the byte order mark, interlinear annotation, the tag block
 * U+E0000-U+E007F...); the line and paragraph separators; and every
 * noncharacter (U+FDD0-U+FDEF, U+xFFFE and U+xFFFF of each plane). */
bool ag_cp_must_escape(unsigned cp);

/* s as a JSON string, quotes included. */
void ag_json_string(FILE *f, const char *s);

/* s with every byte outside 0x20-0x7e, and '\\', as \xNN, into buf (size
 * bytes, at least 4); cut at a whole escape with "..." when it does not
 * fit. Returns buf. */
char *ag_escape_bytes(const char *s, char *buf, size_t size);

/* s percent-encoded into buf (size bytes): every byte outside A-Z a-z 0-9
 * and . _ - / @ : + as %XX; NULL or "" as "-" (none), and the values "-"
 * and "?" themselves as %2D and %3F (they mark none and unknown). -ENOBUFS
 * when it does not fit. */
int ag_escape_percent(const char *s, char *buf, size_t size);
