#!/bin/sh
# The lab's certificate authority, kept on the control machine (never in the
# repository): a CA key and certificate, one certificate per host, and the
# password Prometheus uses on the node exporters with its bcrypt hash.
# The lab_ca role runs it; an operator may too (docs/running-a-lab.md,
# "Certificates").  Every command prints "made ..."/"issued ..." when it
# changed something and "kept ..." when it did not.
#
#   lab-ca.sh init DIR NAME DAYS
#       DIR/ca.key (0600) and DIR/ca.crt, valid DAYS days, unless both exist.
#   lab-ca.sh issue DIR HOST DAYS RENEW_DAYS SAN...
#       DIR/hosts/HOST.key and HOST.crt for the SANs (names, IPv4 or IPv6
#       addresses), signed by the CA and valid DAYS days; kept while it is
#       signed by the present CA, names the same SANs and does not expire
#       within RENEW_DAYS days, issued anew otherwise.
#   lab-ca.sh scrape-password DIR PYTHON
#       DIR/node-exporter.password (random) and its bcrypt hash, made with
#       PYTHON's bcrypt module, unless they exist.
set -eu
umask 077

die() { echo "lab-ca.sh: $*" >&2; exit 2; }

[ $# -ge 1 ] || die "usage: lab-ca.sh init|issue|scrape-password ..."
command=$1
shift

case $command in
init)
  [ $# -eq 3 ] || die "usage: lab-ca.sh init DIR NAME DAYS"
  dir=$1 name=$2 days=$3
  mkdir -p "$dir/hosts"
  chmod 0700 "$dir"
  if [ -s "$dir/ca.crt" ] && [ -s "$dir/ca.key" ]; then
    echo "kept $dir/ca.crt"
    exit 0
  fi
  openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$dir/ca.key.tmp" -out "$dir/ca.crt.tmp" -days "$days" -subj "/CN=$name" \
    -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  chmod 0644 "$dir/ca.crt.tmp"
  mv "$dir/ca.key.tmp" "$dir/ca.key"
  mv "$dir/ca.crt.tmp" "$dir/ca.crt"
  echo "made $dir/ca.crt"
  ;;
issue)
  [ $# -ge 5 ] || die "usage: lab-ca.sh issue DIR HOST DAYS RENEW_DAYS SAN..."
  dir=$1 host=$2 days=$3 renew=$4
  shift 4
  [ -s "$dir/ca.crt" ] || die "$dir holds no CA; run lab-ca.sh init first"
  sans=
  for san in "$@"; do
    case $san in
      *:*) entry="IP:$san" ;;
      *[!0-9.]*) entry="DNS:$san" ;;
      *) entry="IP:$san" ;;
    esac
    sans=${sans:+$sans,}$entry
  done
  crt=$dir/hosts/$host.crt key=$dir/hosts/$host.key recorded=$dir/hosts/$host.sans
  if [ -s "$crt" ] && [ -s "$key" ] && [ -s "$recorded" ] && [ "$(cat "$recorded")" = "$sans" ] &&
    openssl verify -CAfile "$dir/ca.crt" "$crt" >/dev/null 2>&1 &&
    openssl x509 -checkend $((renew * 86400)) -noout -in "$crt" >/dev/null; then
    echo "kept $crt"
    exit 0
  fi
  work=$dir/hosts/$host.new
  rm -rf "$work"
  mkdir "$work"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$work/key" -out "$work/csr" -subj "/CN=$host" 2>/dev/null
  printf 'subjectAltName=%s\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n' \
    "$sans" >"$work/ext"
  openssl x509 -req -in "$work/csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
    -set_serial "0x$(openssl rand -hex 16)" -days "$days" -extfile "$work/ext" -out "$work/crt" 2>/dev/null
  chmod 0644 "$work/crt"
  mv "$work/key" "$key"
  mv "$work/crt" "$crt"
  printf '%s\n' "$sans" >"$recorded"
  rm -rf "$work"
  echo "issued $crt for $sans"
  ;;
scrape-password)
  [ $# -eq 2 ] || die "usage: lab-ca.sh scrape-password DIR PYTHON"
  dir=$1 python=$2
  password=$dir/node-exporter.password hash=$dir/node-exporter.password.bcrypt
  changed=
  if [ ! -s "$password" ]; then
    openssl rand -hex 24 >"$password.tmp"
    mv "$password.tmp" "$password"
    changed=yes
  fi
  if [ -n "$changed" ] || [ ! -s "$hash" ]; then
    "$python" -c 'import sys, bcrypt
sys.stdout.write(bcrypt.hashpw(sys.stdin.read().strip().encode(), bcrypt.gensalt(10)).decode() + "\n")' \
      <"$password" >"$hash.tmp"
    mv "$hash.tmp" "$hash"
    echo "made $password and its bcrypt hash"
  else
    echo "kept $password"
  fi
  ;;
*)
  die "unknown command $command: init, issue or scrape-password"
  ;;
esac
