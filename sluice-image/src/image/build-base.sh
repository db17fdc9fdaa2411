#!/usr/bin/env bash
# build-base.sh JAVA_HOME OUT_DIR MODULES: the base image of the container image, built without a registry or a
# Docker daemon. Jib then puts the launcher jar and the health probe on top of it (pom.xml).
#
# The base is one layer: a Java runtime made by jlink of only the JDK modules `sluice serve` uses, the few shared
# libraries that runtime's binaries link to (found with ldd, copied from this machine), /etc/passwd and
# /etc/group naming the non-root user, and an empty /tmp. Its config carries the one thing Jib cannot set, the
# Docker HEALTHCHECK, which Jib passes through from its base image.
#
# Written as a docker-archive (what `docker save` writes: manifest.json, the config, the layer as a plain tar),
# the format Jib reads from a tar:// base. OUT_DIR/base-image.tar is rebuilt only when the inputs change (the
# JDK, the modules, this script), since jlink takes most of the image's build time.
set -euo pipefail
java_home="$1"
out="$2"
modules="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# The non-root user the container runs as (the "nonroot" of distroless images).
uid=65532

stamp="$out/base-image.stamp"
want="$(printf '%s\n' "$java_home" "$modules" "$("$java_home/bin/java" -version 2>&1)" "$(sha256sum "$here/build-base.sh")")"
if [ -f "$out/base-image.tar" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "build-base: $out/base-image.tar is up to date"
  exit 0
fi

root="$out/base-root"
rm -rf "$root" "$out/base-image" "$out/base-image.tar" "$stamp"
mkdir -p "$root/opt" "$root/etc" "$root/tmp" "$out/base-image"

# The runtime. --add-options are the JVM's defaults inside the image, read before the command line and
# JDK_JAVA_OPTIONS (so either overrides them), without the "Picked up ..." line that JDK_JAVA_OPTIONS would print
# on every start: half of the container's memory limit for the heap (the launcher's choice below 1 GiB), and
# no hsperfdata file in /tmp. The CDS archive shortens the start of the server and of each health probe; the
# one for heaps over 32 GiB (classes_nocoops.jsa) is dropped, such a JVM starts without it.
"$java_home/bin/jlink" --add-modules "$modules" --strip-debug --no-man-pages --no-header-files --compress=2 \
  --generate-cds-archive --add-options="-XX:MaxRAMPercentage=50 -XX:-UsePerfData" --output "$root/opt/java"
rm -f "$root/opt/java/lib/server/classes_nocoops.jsa"

# The shared libraries the runtime's binaries need, at the paths this machine's loader found them, as plain
# files (symbolic links resolved): the C library and its loader, libm, zlib, libstdc++ and libgcc_s on Debian.
# The build machine must be Debian (or a derivative) on x86-64: dpkg-query finds each library's package below.
libs="$(find "$root/opt/java" -type f \( -name '*.so' -o -path '*/bin/*' \) -exec ldd {} \; 2>/dev/null \
  | grep -oE '(=> )?/[^ ]+ \(0x' | sed -E 's/^=> //; s/ \(0x$//' | grep -v "^$root" | sort -u)"
for lib in $libs; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
if [ -z "$libs" ] || [ ! -f "$root/lib64/ld-linux-x86-64.so.2" ]; then
  echo "build-base: ldd found no loader for the runtime's java; the image would not start" >&2
  exit 1
fi
# Their licences travel with them: each library's Debian package's copyright file, where Debian keeps it.
for lib in $libs; do
  package="$(dpkg-query -S "$lib" 2>/dev/null || dpkg-query -S "$(realpath "$lib")")"
  package="${package%%:*}"
  mkdir -p "$root/usr/share/doc/$package"
  cp "/usr/share/doc/$package/copyright" "$root/usr/share/doc/$package/copyright"
done

printf 'root:x:0:0:root:/root:/sbin/nologin\nsluice:x:%s:%s:sluice:/tmp:/sbin/nologin\n' "$uid" "$uid" \
  > "$root/etc/passwd"
printf 'root:x:0:\nsluice:x:%s:\n' "$uid" > "$root/etc/group"
chmod 1777 "$root/tmp"

# One layer, reproducible: sorted, owned by root, one fixed time.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$root" -cf "$out/base-image/layer.tar" .
diff_id="sha256:$(sha256sum "$out/base-image/layer.tar" | cut -d' ' -f1)"

# The health check: the probe class Jib puts in /app/classes asks GET /health on the server's own HTTP port.
# Durations in nanoseconds, as the Docker image format has them. The probe's JVM is kept small: C1 only, the
# serial collector, a 16 MiB heap.
second=1000000000
cat > "$out/base-image/config.json" <<EOF
{
  "architecture": "amd64",
  "os": "linux",
  "config": {
    "Healthcheck": {
      "Test": ["CMD", "/opt/java/bin/java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx16m",
               "-cp", "/app/classes", "io.sluice.image.HealthProbe"],
      "Interval": $((30 * second)),
      "Timeout": $((10 * second)),
      "StartPeriod": $((30 * second)),
      "Retries": 3
    }
  },
  "rootfs": {"type": "layers", "diff_ids": ["$diff_id"]},
  "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "sluice-image/src/image/build-base.sh"}]
}
EOF
cat > "$out/base-image/manifest.json" <<EOF
[{"Config": "config.json", "RepoTags": ["sluice-base:local"], "Layers": ["layer.tar"]}]
EOF
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$out/base-image" \
  -cf "$out/base-image.tar" manifest.json config.json layer.tar
rm -rf "$out/base-image"
printf '%s' "$want" > "$stamp"
echo "build-base: $out/base-image.tar ($(du -m "$out/base-image.tar" | cut -f1) MB, modules $modules)"
