#!/usr/bin/env python3
# doc-blocks.py OUTDIR FILE...: writes every command block of the given
# Markdown files (fenced ``` blocks) and man pages (.EX/.EE in EXAMPLES) to
# OUTDIR/NNN.where ("FILE:LINE"), NNN.mark (what the test does with it) and
# NNN.body (the block's text, roff escapes resolved).
#
# The mark is the "doc-test:" comment right before the block:
#   Markdown   <!-- doc-test: KIND ARGS; KIND ARGS -->
#   man page   .\" doc-test: KIND ARGS; KIND ARGS
# A block of README.md or of a man page's EXAMPLES without a mark gets the
# mark "UNMARKED" (tests/test-docs.sh fails on it); unmarked blocks of other
# Markdown files are not written.
#
# doc-blocks.py --links FILE...: prints the relative links of the Markdown
# files whose file or #heading does not exist; exits 1 if there is any.
import os
import re
import sys

MD_MARK = re.compile(r'^\s*<!--\s*doc-test:\s*(.*?)\s*-->\s*$')
MAN_MARK = re.compile(r'^\.\\"\s*doc-test:\s*(.*?)\s*$')


def roff_text(line):
    line = line.replace('\\-', '-').replace('\\(dq', '"').replace('\\&', '')
    return line.replace('\\e', '\\')


def markdown(path, strict):
    lines = open(path, encoding='utf-8').read().split('\n')
    i = 0
    while i < len(lines):
        m = re.match(r'^(\s*)```', lines[i])
        if not m:
            i += 1
            continue
        indent = len(m.group(1))
        start = i
        j = i - 1
        while j >= 0 and lines[j].strip() == '':
            j -= 1
        mark = MD_MARK.match(lines[j]).group(1) if j >= 0 and MD_MARK.match(lines[j]) else None
        body = []
        i += 1
        while i < len(lines) and not re.match(r'^\s*```\s*$', lines[i]):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == '' else lines[i])
            i += 1
        i += 1
        if mark is None and not strict:
            continue
        yield start + 1, mark or 'UNMARKED', body


def man(path):
    lines = open(path, encoding='utf-8').read().split('\n')
    in_examples = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith('.SH'):
            in_examples = line.strip() == '.SH EXAMPLES'
        if in_examples and line.strip() == '.EX':
            start = i
            j = i - 1
            while j >= 0 and lines[j].startswith('.in'):
                j -= 1
            m = MAN_MARK.match(lines[j]) if j >= 0 else None
            body = []
            i += 1
            while i < len(lines) and lines[i].strip() != '.EE':
                body.append(roff_text(lines[i]))
                i += 1
            yield start + 1, m.group(1) if m else 'UNMARKED', body
        i += 1


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r'[^\w\- ]', '', s)
    return s.replace(' ', '-')


def anchors(path):
    text = open(path, encoding='utf-8').read()
    text = re.sub(r'(?ms)^\s*```.*?^\s*```', '', text)
    return {slug(m.group(1)) for m in re.finditer(r'(?m)^#+\s+(.*)$', text)}


def links(paths):
    """Prints every relative link of the Markdown files whose file or
    #anchor does not exist; returns how many."""
    bad = 0
    for path in paths:
        text = open(path, encoding='utf-8').read()
        text = re.sub(r'(?ms)^\s*```.*?^\s*```', '', text)
        for m in re.finditer(r'\]\(([^)\s]+)\)', text):
            target = m.group(1)
            if re.match(r'^[a-z]+:', target):
                continue
            f, _, a = target.partition('#')
            f = os.path.normpath(os.path.join(os.path.dirname(path), f)) if f else path
            if not os.path.exists(f):
                print('%s: %s: no such file' % (path, target))
                bad += 1
            elif a and (not f.endswith('.md') or a not in anchors(f)):
                print('%s: %s: no such heading' % (path, target))
                bad += 1
    return bad


def main():
    if sys.argv[1] == '--links':
        sys.exit(1 if links(sys.argv[2:]) else 0)
    out = sys.argv[1]
    n = 0
    for path in sys.argv[2:]:
        name = os.path.basename(path)
        if re.search(r'\.[1-8]$', name):
            blocks = man(path)
        else:
            blocks = markdown(path, name == 'README.md')
        for line, mark, body in blocks:
            n += 1
            base = os.path.join(out, '%03d' % n)
            open(base + '.where', 'w').write('%s:%d\n' % (path, line))
            open(base + '.mark', 'w').write(mark + '\n')
            open(base + '.body', 'w').write('\n'.join(body) + '\n')


main()
