#!/usr/bin/env bash
# Builds and installs pgvector (the `vector` extension) for the Debian/Ubuntu PostgreSQL on this
# machine, from Debian's own source package, without touching the machine's apt sources.
#
# Debian 12 (bookworm) ships no pgvector package for PostgreSQL 15; the next Debian release's
# source archive has pgvector 0.8.0, which builds against postgresql-server-dev-15 with make and
# gcc in about 1.5 minutes on 2 cores. The source list and package lists used for that live in a
# temporary directory of their own (apt-get -o Dir::Etc::SourceList=… -o Dir::State::Lists=…).
#
# Usage (as root):   scripts/install-pgvector.sh
# Environment:
#   PG_MAJOR              PostgreSQL major version to build for (default: the newest in /usr/lib/postgresql)
#   PGVECTOR_SUITE        the Debian suite whose source package to build (default: trixie)
#   PGVECTOR_MIRROR       the Debian archive URL (default: the one this machine's apt sources use)
#   PGVECTOR_OPTFLAGS     compiler flags for the distance functions (default: a portable build —
#                         Debian's source package turns upstream's -march=native off with its
#                         no-native patch; the halfvec distances still choose F16C/AVX at run
#                         time). `-march=native` builds for this CPU kind only; measured at 1M
#                         segments it made no difference to the HNSW scan (docs/scale.md)
# Elsewhere: install pgvector from your platform (the postgresql-NN-pgvector package where it
# exists, the pgvector/pgvector Docker images, or your managed PostgreSQL's extension list).
set -euo pipefail

PG_MAJOR="${PG_MAJOR:-$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -1)}"
if [ -z "$PG_MAJOR" ]; then
  echo "install-pgvector: no PostgreSQL server under /usr/lib/postgresql (apt-get install postgresql-15 first)" >&2
  exit 1
fi
SHARE="/usr/share/postgresql/$PG_MAJOR/extension"
if [ -f "$SHARE/vector.control" ]; then
  echo "install-pgvector: pgvector is already installed for PostgreSQL $PG_MAJOR ($(grep default_version "$SHARE/vector.control"))"
  exit 0
fi
SUITE="${PGVECTOR_SUITE:-trixie}"

# The archive this machine already uses (deb822 .sources or one-line sources.list), security archive left out.
mirror="${PGVECTOR_MIRROR:-}"
if [ -z "$mirror" ]; then
  mirror="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {print $2}' | grep -v security | head -1 || true)"
fi
if [ -z "$mirror" ]; then
  mirror="$(grep -hE '^deb(-src)? ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '{for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; exit}}' | grep -v security | head -1 || true)"
fi
if [ -z "$mirror" ]; then
  echo "install-pgvector: found no Debian archive in /etc/apt; set PGVECTOR_MIRROR" >&2
  exit 1
fi

need=()
for p in "postgresql-server-dev-$PG_MAJOR" dpkg-dev make gcc; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ "${#need[@]}" -gt 0 ]; then
  echo "install-pgvector: installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

work="$(mktemp -d /tmp/pgvector-build.XXXXXX)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
echo "deb-src [signed-by=$keyring] $mirror $SUITE main" >"$work/sources.list"
# Only this directory's list and lists: the machine's own apt configuration is not read or changed.
APT=(apt-get -q -o APT::Sandbox::User=root -o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=-" -o "Dir::State::Lists=$work/lists")
echo "install-pgvector: fetching the pgvector source package of Debian $SUITE"
"${APT[@]}" update >/dev/null
cd "$work"
"${APT[@]}" source pgvector >/dev/null
src="$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -1)"
if [ -z "$src" ]; then
  echo "install-pgvector: the source package did not unpack" >&2
  exit 1
fi
echo "install-pgvector: building $(basename "$src") for PostgreSQL $PG_MAJOR"
make_args=(PG_CONFIG="/usr/lib/postgresql/$PG_MAJOR/bin/pg_config")
if [ "${PGVECTOR_OPTFLAGS+set}" = set ]; then make_args+=(OPTFLAGS="$PGVECTOR_OPTFLAGS"); fi
make -C "$src" -j"$(nproc)" "${make_args[@]}" >/dev/null
make -C "$src" "${make_args[@]}" install >/dev/null
echo "install-pgvector: installed $(grep default_version "$SHARE/vector.control") into PostgreSQL $PG_MAJOR"
