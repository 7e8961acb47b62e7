/* SPDX-License-Identifier: LGPL-2.1-or-later
 * Unit tests: names a user chose as JSON strings and as log text
 * (lib/util/escape.c): control, format and noncharacter code points escaped,
 * invalid UTF-8 kept byte for byte (\udcXX), nothing raw in a log line. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "escape.h"
#include "util.h"
#include "unit-util.h"

/* s as ag_json_string writes it (caller frees) */
static char *json(const char *s) {
        MemOut m;

        ag_json_string(mem_out_open(&m), s);
        return mem_out_done(&m);
}

static void assert_json(const char *s, const char *want) {
        char *got = json(s);
        assert_string_equal(got, want);
        free(got);
}

/* UTF-8 of cp into buf (at least 5 bytes) */
static void utf8(unsigned cp, char *buf) {
        if (cp < 0x80)
                buf[0] = (char) cp, buf[1] = 0;
        else if (cp < 0x800)
                buf[0] = (char) (0xc0 | cp >> 6), buf[1] = (char) (0x80 | (cp & 0x3f)), buf[2] = 0;
        else if (cp < 0x10000)
                buf[0] = (char) (0xe0 | cp >> 12), buf[1] = (char) (0x80 | (cp >> 6 & 0x3f)),
                buf[2] = (char) (0x80 | (cp & 0x3f)), buf[3] = 0;
        else
                buf[0] = (char) (0xf0 | cp >> 18), buf[1] = (char) (0x80 | (cp >> 12 & 0x3f)),
                buf[2] = (char) (0x80 | (cp >> 6 & 0x3f)), buf[3] = (char) (0x80 | (cp & 0x3f)), buf[4] = 0;
}

/* Every format character (Cf) of Unicode 14 as Python 3.11's unicodedata
 * lists them, an independent source for the table in lib/util/escape.c. */
static const struct { unsigned lo, hi; } cf14[] = {
        { 0x00ad, 0x00ad }, { 0x0600, 0x0605 }, { 0x061c, 0x061c }, { 0x06dd, 0x06dd }, { 0x070f, 0x070f },
        { 0x0890, 0x0891 }, { 0x08e2, 0x08e2 }, { 0x180e, 0x180e }, { 0x200b, 0x200f }, { 0x202a, 0x202e },
        { 0x2060, 0x2064 }, { 0x2066, 0x206f }, { 0xfeff, 0xfeff }, { 0xfff9, 0xfffb }, { 0x110bd, 0x110bd },
        { 0x110cd, 0x110cd }, { 0x13430, 0x13438 }, { 0x1bca0, 0x1bca3 }, { 0x1d173, 0x1d17a },
        { 0xe0001, 0xe0001 }, { 0xe0020, 0xe007f },
};

static void test_must_escape(void **state) {
        unsigned n = 0;

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cf14); i++)
                for (unsigned cp = cf14[i].lo; cp <= cf14[i].hi; cp++, n++)
                        assert_true(ag_cp_must_escape(cp));
        assert_int_equal(n, 163);
        /* controls, separators */
        for (unsigned cp = 0; cp < 0x20; cp++)
                assert_true(ag_cp_must_escape(cp));
        for (unsigned cp = 0x7f; cp <= 0x9f; cp++)
                assert_true(ag_cp_must_escape(cp));
        assert_true(ag_cp_must_escape(0x2028));
        assert_true(ag_cp_must_escape(0x2029));
        /* the 66 noncharacters */
        n = 0;
        for (unsigned cp = 0; cp <= 0x10ffff; cp++)
                if ((cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe) {
                        assert_true(ag_cp_must_escape(cp));
                        n++;
                }
        assert_int_equal(n, 66);
        /* Unicode 15's new format characters, the unassigned rest of the tag block */
        assert_true(ag_cp_must_escape(0x1343f));
        assert_true(ag_cp_must_escape(0xe0000));
        assert_true(ag_cp_must_escape(0xe0002));
        /* text as it is */
        static const unsigned plain[] = { ' ', 'a', '~', 0xa0, 0xe9, 0x5d0, 0x4e2d, 0x200a, 0x2030, 0x2065,
                                          0xfffd, 0xfdcf, 0xfdf0, 0x1f600, 0xe0080, 0x10fffd };
        for (size_t i = 0; i < ELEMENTSOF(plain); i++)
                assert_false(ag_cp_must_escape(plain[i]));
}

static void test_json_every_escaped_code_point(void **state) {
        char s[8], want[16];

        (void) state;
        /* each code point that must be escaped comes out as \uXXXX, or a surrogate pair */
        for (unsigned cp = 1; cp <= 0x10ffff; cp++) {
                if (cp >= 0xd800 && cp <= 0xdfff)
                        continue;
                utf8(cp, s);
                char *got = json(s);
                if (!ag_cp_must_escape(cp)) {
                        if (cp >= 0x80)
                                assert_int_equal(strlen(got), strlen(s) + 2);   /* raw */
                } else if (cp > 0xffff) {
                        snprintf(want, sizeof want, "\"\\u%04x\\u%04x\"", 0xd800 + ((cp - 0x10000) >> 10),
                                 0xdc00 + ((cp - 0x10000) & 0x3ff));
                        assert_string_equal(got, want);
                } else {
                        snprintf(want, sizeof want, "\"\\u%04x\"", cp);
                        assert_string_equal(got, want);
                }
                free(got);
        }
}

static void test_json_strings(void **state) {
        (void) state;
        assert_json("plain", "\"plain\"");
        assert_json("a\"b\\c", "\"a\\\"b\\\\c\"");
        assert_json("zwsp-\xe2\x80\x8b", "\"zwsp-\\u200b\"");
        assert_json("bom-\xef\xbb\xbf", "\"bom-\\ufeff\"");
        assert_json("shy-\xc2\xad", "\"shy-\\u00ad\"");
        assert_json("tag-\xf3\xa0\x80\x81\xf3\xa0\x81\xa1", "\"tag-\\udb40\\udc01\\udb40\\udc61\"");
        assert_json("nc-\xef\xbf\xbe", "\"nc-\\ufffe\"");
        assert_json("nc-\xf4\x8f\xbf\xbf", "\"nc-\\udbff\\udfff\"");
        assert_json("ctl-\r\x1b", "\"ctl-\\u000d\\u001b\"");
        assert_json("caf\xc3\xa9 \xe4\xb8\xad", "\"caf\xc3\xa9 \xe4\xb8\xad\"");
        /* invalid UTF-8: each byte its own \udcXX; U+FFFD itself passes raw */
        assert_json("bad-\xff", "\"bad-\\udcff\"");
        assert_json("bad-\xfe", "\"bad-\\udcfe\"");
        assert_json("rep-\xef\xbf\xbd", "\"rep-\xef\xbf\xbd\"");
        assert_json("cut-\xe2\x80", "\"cut-\\udce2\\udc80\"");
        assert_json("long-\xc0\xaf", "\"long-\\udcc0\\udcaf\"");              /* overlong '/' */
        assert_json("sur-\xed\xa0\x80", "\"sur-\\udced\\udca0\\udc80\"");     /* encoded surrogate */
        assert_json("big-\xf4\x90\x80\x80", "\"big-\\udcf4\\udc90\\udc80\\udc80\"");
}

static void test_escape_bytes(void **state) {
        char buf[64], small[12];

        (void) state;
        assert_string_equal(ag_escape_bytes("/r/user-1/s\r\x1b[2J", buf, sizeof buf), "/r/user-1/s\\x0d\\x1b[2J");
        assert_string_equal(ag_escape_bytes("a\\b\xe2\x80\xae", buf, sizeof buf), "a\\x5cb\\xe2\\x80\\xae");
        assert_string_equal(ag_escape_bytes("", buf, sizeof buf), "");
        /* cut at a whole escape, with "..." */
        assert_string_equal(ag_escape_bytes("abcdefghijklmnop", small, sizeof small), "abcdefgh...");
        assert_string_equal(ag_escape_bytes("abcd\x1b\x1b\x1b", small, sizeof small), "abcd\\x1b...");
        assert_string_equal(ag_escape_bytes("abcdefghijk", small, sizeof small), "abcdefghijk");
        for (size_t n = 4; n < sizeof small; n++) {
                ag_escape_bytes("\x1b\x1b\x1b\x1b\x1b\x1b", small, n);
                assert_true(strlen(small) < n);
                assert_null(strchr(small, 0x1b));
        }
}

UNIT_MAIN(cmocka_unit_test(test_must_escape),
          cmocka_unit_test(test_json_every_escaped_code_point),
          cmocka_unit_test(test_json_strings),
          cmocka_unit_test(test_escape_bytes))
