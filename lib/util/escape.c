/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Escaping names a user chose for JSON, for logs and for key=value records. See escape.h. */

#include <assert.h>
#include <errno.h>
#include <string.h>

#include "escape.h"
#include "util.h"

size_t ag_utf8_decode(const unsigned char *p, unsigned *ret_cp) {
        size_t n;
        unsigned cp;

        assert(p);
        assert(ret_cp);

        if (p[0] < 0x80) {
                *ret_cp = p[0];
                return 1;
        }
        if ((p[0] & 0xe0) == 0xc0) {
                n = 2;
                cp = p[0] & 0x1f;
        } else if ((p[0] & 0xf0) == 0xe0) {
                n = 3;
                cp = p[0] & 0x0f;
        } else if ((p[0] & 0xf8) == 0xf0) {
                n = 4;
                cp = p[0] & 0x07;
        } else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (p[i] & 0x3f);
        }
        if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        *ret_cp = cp;
        return n;
}

/* Unicode 15.1's format characters (category Cf), and the whole tag block
 * (U+E0000 and U+E0002-U+E001F are unassigned there); ranges inclusive. */
static const struct { unsigned lo, hi; } format_chars[] = {
        { 0x00ad, 0x00ad }, { 0x0600, 0x0605 }, { 0x061c, 0x061c }, { 0x06dd, 0x06dd },
        { 0x070f, 0x070f }, { 0x0890, 0x0891 }, { 0x08e2, 0x08e2 }, { 0x180e, 0x180e },
        { 0x200b, 0x200f }, { 0x202a, 0x202e }, { 0x2060, 0x2064 }, { 0x2066, 0x206f },
        { 0xfeff, 0xfeff }, { 0xfff9, 0xfffb }, { 0x110bd, 0x110bd }, { 0x110cd, 0x110cd },
        { 0x13430, 0x1343f }, { 0x1bca0, 0x1bca3 }, { 0x1d173, 0x1d17a }, { 0xe0000, 0xe007f },
};

bool ag_cp_must_escape(unsigned cp) {
        if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
                return true;                    /* C0, DEL, C1 */
        if (cp == 0x2028 || cp == 0x2029)
                return true;                    /* line and paragraph separators */
        if ((cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe)
                return true;                    /* noncharacters */
        for (size_t i = 0; i < ELEMENTSOF(format_chars); i++)
                if (cp >= format_chars[i].lo && cp <= format_chars[i].hi)
                        return true;
        return false;
}

static void json_u(FILE *f, unsigned cp) {
        if (cp > 0xffff) {
                cp -= 0x10000;
                fprintf(f, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
        } else
                fprintf(f, "\\u%04x", cp);
}

void ag_json_string(FILE *f, const char *s) {
        assert(f);
        assert(s);

        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                unsigned cp = 0;
                size_t n = ag_utf8_decode(p, &cp);

                if (n == 0) {
                        json_u(f, 0xdc00 + *p);         /* surrogateescape: one invalid byte */
                        p++;
                } else if (ag_cp_must_escape(cp)) {
                        json_u(f, cp);
                        p += n;
                } else if (n > 1) {
                        fwrite(p, 1, n, f);
                        p += n;
                } else {
                        if (*p == '"' || *p == '\\')
                                fputc('\\', f);
                        fputc(*p, f);
                        p++;
                }
        }
        fputc('"', f);
}

static bool plain_byte(unsigned char c) {
        return c >= 0x20 && c < 0x7f && c != '\\';
}

char *ag_escape_bytes(const char *s, char *buf, size_t size) {
        const unsigned char *p;
        size_t w = 0, need = 0, room;

        assert(s);
        assert(buf);

        for (p = (const unsigned char *) s; *p; p++)
                need += plain_byte(*p) ? 1 : 4;
        /* all of it, or as much as leaves room for "..." */
        room = need < size ? need : size - 1 - 3;
        for (p = (const unsigned char *) s; *p; p++) {
                if (w + (plain_byte(*p) ? 1 : 4) > room)
                        break;
                if (plain_byte(*p))
                        buf[w++] = (char) *p;
                else
                        w += (size_t) snprintf(buf + w, size - w, "\\x%02x", *p);
        }
        if (*p) {
                memcpy(buf + w, "...", 3);
                w += 3;
        }
        buf[w] = 0;
        return buf;
}

int ag_escape_percent(const char *s, char *buf, size_t size) {
        static const char hex[] = "0123456789ABCDEF";
        size_t w = 0;

        if (!s || !*s || strcmp(s, "-") == 0 || strcmp(s, "?") == 0) {
                /* none; a value that is the mark of none or unknown, encoded */
                const char *v = !s || !*s ? "-" : s[0] == '-' ? "%2D" : "%3F";
                if (size < strlen(v) + 1)
                        return -ENOBUFS;
                strcpy(buf, v);
                return 0;
        }
        for (const unsigned char *c = (const unsigned char *) s; *c; c++) {
                bool plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                             strchr("._-/@:+", *c) != NULL;
                if (size - w < (plain ? 2u : 4u))
                        return -ENOBUFS;
                if (plain)
                        buf[w++] = (char) *c;
                else {
                        buf[w++] = '%';
                        buf[w++] = hex[*c >> 4];
                        buf[w++] = hex[*c & 15];
                }
        }
        buf[w] = 0;
        return 0;
}
