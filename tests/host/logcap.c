/* SPDX-License-Identifier: LGPL-2.1-or-later
 * logcap SOCKET FILE: a minimal syslog receiver for the host tests. Binds a
 * datagram socket (normally /dev/log when the machine has no syslog daemon)
 * and appends every message to FILE, one a line, until killed.
 * logcap --stale SOCKET: exit 0 when SOCKET is a socket nobody listens on
 * (left behind by a receiver that was killed), 1 otherwise. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_term(int sig) { (void) sig; stop = 1; }

int main(int argc, char **argv) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char buf[8192];
        FILE *out;
        int fd;

        if (argc == 3 && strcmp(argv[1], "--stale") == 0) {
                struct stat st;
                if (strlen(argv[2]) >= sizeof sa.sun_path || lstat(argv[2], &st) < 0 || !S_ISSOCK(st.st_mode))
                        return 1;
                strcpy(sa.sun_path, argv[2]);
                fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                if (fd < 0)
                        return 1;
                if (connect(fd, (struct sockaddr *) &sa, sizeof sa) == 0)
                        return 1;
                return errno == ECONNREFUSED ? 0 : 1;
        }
        if (argc != 3 || strlen(argv[1]) >= sizeof sa.sun_path)
                return 2;
        strcpy(sa.sun_path, argv[1]);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                perror("logcap");
                return 1;
        }
        chmod(argv[1], 0666);
        out = fopen(argv[2], "ae");
        if (!out)
                return 1;
        struct sigaction act = { .sa_handler = on_term };   /* no SA_RESTART: recv() returns EINTR */
        sigaction(SIGTERM, &act, NULL);
        sigaction(SIGINT, &act, NULL);
        printf("ready\n");
        fflush(stdout);
        while (!stop) {
                ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
                if (n <= 0)
                        continue;
                buf[n] = 0;
                fprintf(out, "%s\n", buf);
                fflush(out);
        }
        unlink(argv[1]);
        return 0;
}
