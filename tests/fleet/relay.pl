#!/usr/bin/perl
# tests/fleet/relay.pl PORT: copy one connection between stdin/stdout and
# 127.0.0.1:PORT, both ways, until both sides are done.
#
# kernel/guest-run --fwd-cmd runs it through QEMU's
# guestfwd=tcp:10.0.2.100:80-cmd:..., which spawns it once per guest
# connection with the connection on fds 0 and 1. (The chardev form of
# guestfwd opens ONE host connection at QEMU start and reuses it for every
# guest connection, which breaks a second TLS session and any server
# restart.) If nothing listens on PORT the relay exits at once, so the guest
# sees its connection closed, as it would with the server down.
# Only loopback: the address is fixed here.
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;

my $port = shift // '';
exit 2 unless $port =~ /^\d+$/ && $port > 0 && $port < 65536;
my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
			      Proto => 'tcp', Timeout => 5) or exit 1;
binmode STDIN;
binmode STDOUT;
$s->autoflush(1);
STDOUT->autoflush(1);
my $sel = IO::Select->new(\*STDIN, $s);
my ($in_open, $out_open) = (1, 1);
my $buf;
while ($in_open || $out_open) {
	my @ready = $sel->can_read(600);
	last unless @ready;    # idle 10 minutes: give up
	for my $fh (@ready) {
		my $n = sysread($fh, $buf, 65536);
		if (!defined $n || $n == 0) {
			$sel->remove($fh);
			if ($fh == $s) {
				$out_open = 0;
				shutdown(STDOUT, 1);
			} else {
				$in_open = 0;
				shutdown($s, 1);
			}
			next;
		}
		my $dst = $fh == $s ? \*STDOUT : $s;
		my $off = 0;
		while ($off < $n) {
			my $w = syswrite($dst, $buf, $n - $off, $off);
			exit 0 unless defined $w;
			$off += $w;
		}
	}
}
exit 0;
