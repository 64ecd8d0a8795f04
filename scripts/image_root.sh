#!/usr/bin/env bash
# Assembles the root filesystem of the runtime image (the Dockerfile's
# builder stage runs it; the runtime stage is that tree on an empty base):
#   bash scripts/image_root.sh ROOT PROGRAM...
# ROOT gets: each PROGRAM in /usr/local/bin, stripped; exactly the shared
# libraries they load (ldd's list) and the dynamic loader, at the paths the
# loader looks them up; /etc/passwd and /etc/group with root and cuckood
# (uid and gid 10001), /etc/hosts and nsswitch.conf; the config as /etc/cuckood/cuckood.conf; empty
# /data, /dev, /proc and /tmp for the runtime's mounts; and
# /var/lib/dpkg/status with the stanzas of the Debian packages those
# libraries come from, so that image scanners and `dpkg-query --admindir`
# see what the image holds. /data is made by the Dockerfile (owned by
# 10001).
set -euo pipefail
root=$1
shift
src="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$root"/usr/local/bin "$root"/etc/cuckood/acl "$root"/dev \
    "$root"/proc "$root"/tmp "$root"/var/lib/dpkg
chmod 1777 "$root"/tmp
for prog in "$@"; do
    install -m 755 "$prog" "$root/usr/local/bin/"
    strip "$root/usr/local/bin/$(basename "$prog")"
done

# ldd's lines: "libuv.so.1 => /lib/x86_64-linux-gnu/libuv.so.1 (0x...)"
# and the loader as "/lib64/ld-linux-x86-64.so.2 (0x...)"; linux-vdso has
# no file. cp --parents -L keeps each path and copies the file a symlink
# names.
libs=$(for prog in "$root"/usr/local/bin/*; do ldd "$prog"; done | awk '
    $2 == "=>" && $3 ~ /^\// { print $3 }
    $1 ~ /^\// && $2 ~ /^\(/ { print $1 }' | sort -u)
[ -n "$libs" ] || { echo "image_root.sh: ldd found no libraries" >&2; exit 1; }
pkgs=""
for lib in $libs; do
    cp -L --parents "$lib" "$root"
    # dpkg knows a file by the path its package ships it at, /lib or
    # /usr/lib (merged /usr makes both work for the loader).
    pkg=""
    for p in "$lib" "/usr$lib" "${lib#/usr}" "$(readlink -f "$lib")"; do
        pkg=$(dpkg -S "$p" 2>/dev/null | head -1 | cut -d: -f1) && \
            [ -n "$pkg" ] && break
    done
    [ -n "$pkg" ] || { echo "image_root.sh: no package owns $lib" >&2; exit 1; }
    pkgs="$pkgs $pkg"
done
for pkg in $(printf '%s\n' $pkgs | sort -u); do
    dpkg-query -s "$pkg"
    echo
done >"$root/var/lib/dpkg/status"
# Every library's copyright file, as Debian's licences ask.
for pkg in $(printf '%s\n' $pkgs | sort -u); do
    c=/usr/share/doc/${pkg%%:*}/copyright
    [ -f "$c" ] && cp --parents "$c" "$root"
done

cat >"$root/etc/passwd" <<'PW'
root:x:0:0:root:/root:/usr/sbin/nologin
cuckood:x:10001:10001:cuckood:/data:/usr/sbin/nologin
PW
cat >"$root/etc/group" <<'GR'
root:x:0:
cuckood:x:10001:
GR
# Names resolve from /etc/hosts first (engines mount their own over it).
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n' >"$root/etc/hosts"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
install -m 644 "$src/conf/docker.conf" "$root/etc/cuckood/cuckood.conf"
echo "image_root.sh: $(du -sh "$root" | cut -f1) in $root; packages:" \
    $(printf '%s\n' $pkgs | sort -u) >&2
