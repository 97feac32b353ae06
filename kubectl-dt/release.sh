#!/usr/bin/env bash
# Builds the release archives of kubectl dt and the krew manifest that points at them:
#   kubectl-dt/release.sh v0.4.0
# writes kubectl-dt/dist/kubectl-dt_<os>_<arch>.tar.gz (the binary and LICENSE), their
# SHA256SUMS, and dist/dt.yaml: krew/dt.yaml with the version, URLs and each archive's sha256.
# Upload the archives to the GitHub release of that tag; dist/dt.yaml goes to krew-index.
set -euo pipefail
version=${1:?usage: $0 vX.Y.Z}
cd "$(dirname "$0")"
rm -rf dist && mkdir -p dist
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64; do
  os=${target%/*} arch=${target#*/} exe=kubectl-dt
  [ "$os" = windows ] && exe=kubectl-dt.exe
  work=$(mktemp -d)
  GOOS=$os GOARCH=$arch CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false \
    go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$work/$exe" .
  cp ../LICENSE "$work/"
  tar -C "$work" -czf "dist/kubectl-dt_${os}_${arch}.tar.gz" "$exe" LICENSE
  rm -rf "$work"
done
(cd dist && sha256sum ./*.tar.gz | sed 's| \./| |' > SHA256SUMS)
cp krew/dt.yaml dist/dt.yaml
sed -i "s|v0\.0\.0|$version|g" dist/dt.yaml
while read -r sum file; do
  # The sha256 line that follows this archive's uri.
  awk -v f="$file" -v s="$sum" '{ if (index($0, "/" f)) hit=1; else if (hit && $1=="sha256:") { sub(/"[0-9a-f]+"/, "\"" s "\""); hit=0 } print }' \
    dist/dt.yaml > dist/dt.yaml.new && mv dist/dt.yaml.new dist/dt.yaml
done < dist/SHA256SUMS
echo "dist/: $(ls dist | tr '\n' ' ')"
