"""Trims DigitalOcean's multi-file document to its SSH key operations.

Root (`DigitalOcean-public.v2.yaml`): lines 1-19 (openapi, info, servers), `tags:` with
only the `SSH Keys` entry (its two lines), the `paths` entries of `/v2/account/keys` and
`/v2/account/keys/{ssh_key_identifier}` (lines as written), and `components:` to the end
(security schemes and the global `security`), each line verbatim. `x-tagGroups` and every
other tag and path are left out. Every file the kept paths reach through `$ref`s is
copied byte for byte, at its own path under `specification/`.

Usage: python3 trim_do.py REPO_GIT_DIR OUT_DIR
"""
import os, posixpath, re, subprocess, sys

repo, out = sys.argv[1], sys.argv[2]

def show(p):
    return subprocess.run(['git', '-C', repo, 'show', 'HEAD:' + p],
                          capture_output=True, text=True, check=True).stdout

ROOT = 'specification/DigitalOcean-public.v2.yaml'
lines = show(ROOT).split('\n')
tags = lines.index('tags:')
paths = lines.index('paths:')
comp = next(i for i, l in enumerate(lines) if l.startswith('components:'))
ssh = lines.index('  - name: SSH Keys')
kept = lines[:tags + 1] + lines[ssh:ssh + 2] + ['', 'paths:']
block, keep_block = [], False
for l in lines[paths + 1:comp]:
    if re.match(r'^  /', l):
        if keep_block:
            kept += block
        block, keep_block = [l], l.strip().rstrip(':').startswith('/v2/account/keys')
    else:
        block.append(l)
if keep_block:
    kept += block
kept += lines[comp:]
os.makedirs(os.path.join(out, 'specification'), exist_ok=True)
with open(os.path.join(out, ROOT), 'w') as f:
    f.write('\n'.join(kept))

ref = re.compile(r"\$ref:\s*['\"]?([^'\"#\s]+)")
todo = [posixpath.normpath('specification/' + m.group(1))
        for l in kept for m in [ref.search(l)] if m]
seen = set()
while todo:
    p = todo.pop()
    if p in seen:
        continue
    seen.add(p)
    text = show(p)
    os.makedirs(os.path.join(out, posixpath.dirname(p)), exist_ok=True)
    with open(os.path.join(out, p), 'w') as f:
        f.write(text)
    d = posixpath.dirname(p)
    todo += [posixpath.normpath(posixpath.join(d, m.group(1))) for m in ref.finditer(text)]
print(f'{len(seen) + 1} files')
