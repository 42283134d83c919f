#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/check-portable-c.sh -- does what Windows builds outside ports/ use only the C that
# both MSVC's Universal CRT and POSIX have?
#
#   scripts/check-portable-c.sh [BUILD_DIR]        (default: build-mingw)
#
# No MSVC runs here, so its rule is checked on the mingw-w64 build, which compiles exactly the
# files an MSVC build does (CMakeLists.txt's WIN32 branch: the library, the tool, the bench, the
# examples and the test suites with the in-tree harness, all of which ci.yml's MSVC job builds):
#   functions  every object's undefined symbols (nm -u), less hpshm's own (defined by any
#              object of the build) and the Win32 API's (symbols the mingw-w64 C runtime
#              libraries do not define), under the name the source wrote (mingw-w64's headers
#              turn printf into __mingw_vfprintf, time into _time64: undone below);
#   headers    every <header> a file of the tree includes, as the compiler opened it (gcc -H
#              on each compile line of compile_commands.json), so an #ifdef _WIN32 branch
#              counts only as Windows compiles it.
# Files under ports/ are left out: the port is where each OS's own calls belong.  The tests
# are in, since the MSVC job builds them: a test that includes <unistd.h> breaks it as surely
# as the library would.  Linux-only and POSIX-only backends (hugetlbfs.c, named_create.c ...)
# are not: Windows never compiles them, and the Linux and posix-generic builds check them.
#
# Everything used must be in scripts/portable-c.list (what that list admits, and why, is at
# its top).  Each miss is one line, "check-portable-c: FILE[:LINE]: NAME ...: fix: ...", and
# the exit status is 1; 0 when all is in the list; 2 on a usage or build error.
# Without BUILD_DIR it configures and builds build-mingw as scripts/test-windows.sh does
# (mingw-w64 must be installed: scripts/test-windows.sh installs it); a build that is up to
# date costs a few seconds, the scan 30 to 60 s on two shared cores (25 s of CPU).
set -euo pipefail

if (($# > 1)); then
	echo "usage: scripts/check-portable-c.sh [BUILD_DIR]" >&2
	exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${1:-build-mingw}
[[ $build == /* ]] || build=$root/$build
prefix=x86_64-w64-mingw32

for tool in $prefix-gcc $prefix-nm python3 cmake; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "check-portable-c: $tool not found (scripts/test-windows.sh installs mingw-w64)" >&2
		exit 2
	}
done

# The objects must be this tree's: configure once, then build what changed.
if [[ ! -f $build/CMakeCache.txt ]]; then
	cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-mingw64.cmake" -DHPSHM_WERROR=ON \
		-DHPSHM_BUILD_TESTS=ON -DHPSHM_TEST_HARNESS=builtin -DHPSHM_BUILD_TOOLS=ON -DHPSHM_BUILD_EXAMPLES=ON \
		-DHPSHM_BUILD_DOCS=OFF >/dev/null || exit 2
fi
cat "$build"/CMakeFiles/*/CMakeSystem.cmake 2>/dev/null | grep -q '^set(CMAKE_SYSTEM_NAME "Windows")' || {
	echo "check-portable-c: $build is not a Windows build (configure it with cmake/toolchain-mingw64.cmake)" >&2
	exit 2
}
cmake --build "$build" --parallel "$(nproc 2>/dev/null || echo 2)" >/dev/null || {
	echo "check-portable-c: $build does not build: cmake --build $build shows why" >&2
	exit 2
}

# What the C runtime libraries define (msvcrt, ucrt and mingw-w64's own additions): a symbol
# not among them and not hpshm's is the Win32 API's (kernel32, advapi32 ...), not the C library.
libdir=$(dirname "$($prefix-gcc -print-file-name=libmingwex.a)")
crt_libs=()
for lib in libmsvcrt.a libucrt.a libmingwex.a libmoldname.a libmingw32.a; do
	[[ -f $libdir/$lib ]] && crt_libs+=("$libdir/$lib")
done
((${#crt_libs[@]} > 0)) || {
	echo "check-portable-c: no mingw-w64 C runtime library in $libdir" >&2
	exit 2
}

exec python3 - "$root" "$build" "$prefix" scripts/portable-c.list "${crt_libs[@]}" <<'PY'
import concurrent.futures, json, os, re, shlex, subprocess, sys

root, build, prefix, listfile = sys.argv[1:5]
crt_libs = sys.argv[5:]

def nm(args):
    out = subprocess.run([prefix + "-nm"] + args, capture_output=True, text=True).stdout
    return out.splitlines()

def bare(sym):
    return sym[len("__imp_"):] if sym.startswith("__imp_") else sym

allowed, windows, fixes = set(), set(), {}
for n, line in enumerate(open(os.path.join(root, listfile)), 1):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    kind, _, rest = line.partition(" ")
    name, _, text = rest.strip().partition(" ")
    if kind in ("header", "func"):
        allowed.add(name)
    elif kind == "windows":
        windows.add(name)
    elif kind == "fix" and text:
        fixes[name] = text.strip()
    else:
        sys.exit(f"check-portable-c: {listfile}:{n}: cannot read \"{line}\" (header, func, windows or fix NAME)")

crt = set()
for lib in crt_libs:
    for line in nm(["--defined-only", lib]):
        f = line.split()
        if len(f) >= 3:
            crt.add(bare(f[2]))

# mingw-w64's headers call their own implementation of some C functions; the source wrote the
# C name, which is the one to judge.
alias = {"__acrt_iob_func": "stdout", "__iob_func": "stdout", "_errno": "errno", "_time64": "time",
         "_time32": "time", "_localtime64": "localtime", "_gmtime64": "gmtime", "_mktime64": "mktime",
         "_difftime64": "difftime", "_ctime64": "ctime", "_setjmp": "setjmp", "_setjmp3": "setjmp",
         "__ms_vsnprintf": "vsnprintf",
         # swprintf() and vswprintf() (ISO C's, with a count) are inline calls of vsnwprintf, which
         # has vswprintf's signature: a source that wrote vsnwprintf itself passes as vswprintf.
         "vsnwprintf": "vswprintf"}
# What the compiler itself calls (stack probes, the startup hook): no source names them.
compiler = {"___chkstk_ms", "__chkstk", "__main", "_fltused"}

def source_of(obj):
    """build/<dir>/CMakeFiles/<target>.dir/<path>.obj -> <dir>/<path>, relative to root."""
    rel = os.path.relpath(obj, build)
    m = re.match(r"(?:(.*)/)?CMakeFiles/[^/]+\.dir/(.*)\.obj$", rel)
    if not m:
        return None
    src = os.path.join(m.group(1) or "", m.group(2))
    return src if os.path.isfile(os.path.join(root, src)) else None

def ours(path):
    return not path.startswith("ports/")

objects = []
for d, dirs, files in os.walk(build):
    dirs[:] = [x for x in dirs if x != "wineprefix"]
    objects += [os.path.join(d, f) for f in files if f.endswith(".obj")]
defined = set()
for obj in objects:
    for line in nm(["--defined-only", obj]):
        f = line.split()
        if len(f) >= 3:
            defined.add(f[2])

bad = []

def where(src, name):
    """The first line of src that names name, for the message; the file alone if none does."""
    try:
        for n, text in enumerate(open(os.path.join(root, src), errors="replace"), 1):
            if re.search(r"\b" + re.escape(name) + r"\b", text):
                return f"{src}:{n}"
    except OSError:
        pass
    return src

def miss(src, name, what):
    fix = fixes.get(name, "what scripts/portable-c.list has, or the port's call (ports/port.h); "
                    "a name both the UCRT and POSIX have goes into the list with its reference")
    bad.append(f"check-portable-c: {where(src, name)}: {what} <{name}> is not in both MSVC's UCRT and POSIX "
               f"(scripts/portable-c.list): fix: {fix}"
               if what == "header" else
               f"check-portable-c: {where(src, name)}: {what} {name}() is not in both MSVC's UCRT and POSIX "
               f"(scripts/portable-c.list): fix: {fix}")

nfunc, nsrc = set(), set()
for obj in sorted(objects):
    src = source_of(obj)
    if not src or not ours(src):
        continue
    nsrc.add(src)
    for line in nm(["-u", obj]):
        sym = line.split()[-1]
        if sym in defined or bare(sym) in defined or sym in compiler:
            continue
        name = bare(sym)
        if name not in crt:
            continue  # the Win32 API's, or another library's (advapi32, bcrypt, shell32)
        if name.startswith("__mingw_"):
            name = name[len("__mingw_"):]
        name = alias.get(name, name)
        nfunc.add(name)
        if name not in allowed and name not in windows:
            miss(src, name, "function")

# Headers: each compile line again, preprocessing only, with -H listing every header opened
# (one dot per nesting level).  A system header opened by a file of the tree outside ports/ is
# one that file includes.
commands = json.load(open(os.path.join(build, "compile_commands.json")))
inc = re.compile(r".*/include(?:-fixed)?/(.+)$")
nhdr = set()

def opened(c):
    """The headers the compiler opens for one compile line, as gcc -H prints them."""
    args = shlex.split(c["command"])
    keep, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD"):
            continue
        keep.append(a)
    return subprocess.run(keep + ["-E", "-H", "-o", os.devnull], cwd=c["directory"], capture_output=True, text=True)

todo = []
for c in commands:
    src = os.path.relpath(c["file"], root)
    if not src.startswith("..") and ours(src):
        todo.append((src, c))
        nsrc.add(src)
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    results = list(pool.map(lambda t: opened(t[1]), todo))
for (src, c), r in zip(todo, results):
    if r.returncode != 0:
        sys.exit(f"check-portable-c: cannot preprocess {src}:\n{r.stderr}")
    stack = [os.path.join(root, src)]
    for line in r.stderr.splitlines():
        m = re.match(r"^(\.+) (.+)$", line)
        if not m:
            continue
        depth, path = len(m.group(1)), os.path.normpath(os.path.join(c["directory"], m.group(2)))
        del stack[depth:]
        parent = stack[-1] if stack else ""
        stack.append(path)
        # hpshm's own headers, checked or generated, are not the C library's.
        if path.startswith(root + "/") or path.startswith(build + "/"):
            continue
        parent_rel = os.path.relpath(parent, root)
        if not parent.startswith(root + "/") or parent.startswith(build + "/") or not ours(parent_rel):
            continue
        h = inc.match(path)
        name = h.group(1) if h else os.path.basename(path)
        nhdr.add(name)
        if name not in allowed and name not in windows:
            miss(parent_rel, name, "header")

for line in sorted(set(bad)):
    print(line, file=sys.stderr)
sys.stderr.flush()
if bad:
    print(f"check-portable-c: {len(set(bad))} use(s) of C library names outside scripts/portable-c.list, "
          f"in {len(nsrc)} files outside ports/ that Windows builds")
else:
    print(f"check-portable-c: {len(nsrc)} files outside ports/ that Windows builds use {len(nfunc)} C library "
          f"functions and {len(nhdr)} headers, all in what MSVC's UCRT and POSIX both have")
sys.exit(1 if bad else 0)
PY
