#!/bin/sh
# Check the packages in DIR as an operator would meet them: inspect the
# .rpm and .deb metadata and contents, install the host's .deb, use what it
# installed (binary, man pages, completion, unit, config), then remove it and
# prove that only the kept config survives, and purge that too. Root only.
set -eu
dir=${1:?usage: check.sh PKGDIR}
fail() { echo "package-check: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (it installs and removes the .deb)"
for t in dpkg dpkg-deb rpm man bash; do command -v $t >/dev/null || fail "$t not found (apt-get install rpm man-db)"; done
if dpkg -s interlink >/dev/null 2>&1; then fail "an interlink package is already installed here; remove it first (dpkg -r interlink)"; fi

arch=$(dpkg --print-architecture)
deb=$(ls "$dir"/interlink_*_"$arch".deb)
for r in "$dir"/*.rpm; do
  info=$(rpm -qpi "$r" 2>/dev/null)
  echo "$info" | grep -q '^License *: Apache-2.0' || fail "$r: no license in rpm -qpi"
  echo "$info" | grep -q '^URL *: https://github.com/interlink/interlink' || fail "$r: no URL"
  list=$(rpm -qpl "$r" 2>/dev/null)
  for f in /usr/bin/interlink /usr/share/man/man1/interlink-pmtu.1.gz /usr/lib/systemd/system/interlink-agent.service /usr/lib/systemd/system/interlink-watch.service \
           /usr/share/bash-completion/completions/interlink /usr/share/zsh/site-functions/_interlink /etc/default/interlink-agent /etc/interlink \
           /usr/share/doc/interlink/README.md /usr/share/doc/interlink/docs/gc.md /usr/share/doc/interlink/docs/reference/interlink-bench.md; do
    echo "$list" | grep -qx "$f" || fail "$r lacks $f"
  done
  rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$r" 2>/dev/null | grep -q '^drwx------ /etc/interlink$' || fail "$r: /etc/interlink is not 0700"
  echo "ok $r: $(rpm -qp --qf '%{NAME} %{VERSION}-%{RELEASE} %{ARCH}' "$r" 2>/dev/null), $(echo "$list" | wc -l) files"
done
for d in "$dir"/*.deb; do
  dpkg-deb -I "$d" | grep 'Homepage: https://github.com/interlink/interlink' >/dev/null || fail "$d: no homepage"
  dpkg-deb -c "$d" | grep '^drwx------ .* ./etc/interlink/$' >/dev/null || fail "$d: /etc/interlink is not 0700"
done

dpkg -i "$deb" >/dev/null
trap 'dpkg --purge interlink >/dev/null 2>&1 || true' EXIT
files=$(dpkg -L interlink)
conffiles=$(dpkg-query -W -f='${Conffiles}\n' interlink | awk 'NF {print $1}')
interlink version | grep -q "^interlink $(dpkg-query -W -f='${Version}' interlink | sed 's/-1$//') " || fail "interlink version does not name the package version: $(interlink version)"
interlink --version >/dev/null || fail "interlink --version failed"
man -w interlink >/dev/null && man -w interlink-pmtu >/dev/null || fail "man -w cannot find the man pages"
man interlink-bench 2>/dev/null | grep -q 'interlink bench' || fail "man interlink-bench does not render"
bash -c '. /usr/share/bash-completion/completions/interlink && complete -p interlink' | grep -q __start_interlink || fail "bash completion not loaded"
[ "$(stat -c %a /etc/interlink)" = 700 ] || fail "/etc/interlink is not 0700"
[ ! -e /etc/systemd/system/multi-user.target.wants/interlink-agent.service ] || fail "the agent unit was enabled at install"
grep -q '^ExecStart=/usr/bin/interlink agent' /usr/lib/systemd/system/interlink-agent.service || fail "the unit does not run /usr/bin/interlink"
# The installed README's links into docs/ lead to installed pages.
doc=/usr/share/doc/interlink
links=$(grep -o '](docs/[^)#]*' $doc/README.md | cut -c3- | sort -u)
[ -n "$links" ] || fail "the installed README links to no docs/ page"
for l in $links; do [ -e "$doc/$l" ] || fail "the installed README links to $l, which was not installed"; done
[ "$(stat -c %a $doc/docs)" = 755 ] && [ "$(stat -c %a $doc/docs/gc.md)" = 644 ] || fail "docs modes: $(stat -c '%a %n' $doc/docs $doc/docs/gc.md)"

dpkg -r interlink >/dev/null
for f in $files; do
  [ -d "$f" ] && continue
  case " $(echo $conffiles) " in *" $f "*) [ -e "$f" ] || fail "dpkg -r removed the config $f it should keep"; continue;; esac
  [ ! -e "$f" ] || fail "dpkg -r left $f behind"
done
dpkg --purge interlink >/dev/null
for f in $conffiles; do [ ! -e "$f" ] || fail "dpkg --purge left $f behind"; done
trap - EXIT
echo "ok $deb: installed, used (version, man, completion, unit, /etc/interlink 0700, docs the README links to), removed keeping only $(echo $conffiles), purged"
