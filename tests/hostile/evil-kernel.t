#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A hostile guest *kernel* (tests/evil-kernel, run by the test build
# build/tests/husk-test in place of husk's kernel): each scenario attacks the
# VMM through virtqueues, MMIO registers, I/O ports, block requests or the
# report page.  husk must end every run with the stated status and one clear
# line, and the host must be untouched.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 70
HT=$ROOT/build/tests/husk-test
EVIL=$ROOT/build/tests/evil-kernel.elf
for f in "$HT" "$EVIL"; do
	[ -x "$f" ] || [ -f "$f" ] || { echo "Bail out! $f is not built (make test-builds)"; exit 1; }
done
export HUSK_IMAGES=$ROOT/build/images HUSK_TEST_KERNEL=$EVIL TMPDIR=$TMP

mkdir "$TMP/data" "$TMP/w"
head -c 100000 /dev/urandom >"$TMP/data/f"
data_sum=$(sha256sum <"$TMP/data/f")
ls -A / >"$TMP/root.before"

# NAME STATUS MESSAGE (a grep pattern; '-' for no message at all) [OPTIONS]
while read -r name want msg opts; do
	[ -n "$name" ] || continue
	case $name in \#*) continue ;; esac
	opts=$(echo "$opts" | sed "s|DATA|$TMP/data|; s|WORK|$TMP/w|")
	# shellcheck disable=SC2086
	timeout 60 "$HT" run -t 2 $opts -e EVIL="$name" lua </dev/null >"$TMP/out" 2>"$TMP/err"
	st=$?
	lines=$(grep -c . "$TMP/err")
	if [ "$msg" = - ]; then
		[ "$st" = "$want" ] && [ "$lines" -eq 0 ]
	else
		msg=$(echo "$msg" | tr _ ' ')
		[ "$st" = "$want" ] && [ "$lines" -eq 1 ] && grep -q "^husk: .*$msg" "$TMP/err"
	fi
	ok $? "$name: $want, $([ "$msg" = - ] && echo "no message" || echo "'$msg'")"
	[ "$st" = "$want" ] || echo "#   status $st: $(head -c 300 "$TMP/err")"
done <<'EOF_SCENARIOS'
# the baseline: the test kernel's driver works
hello                        0   -
# descriptors that lie
desc-outside-ram             121 virtqueue_buffer_lies_outside_guest_RAM
desc-length-lie              121 virtqueue_buffer_lies_outside_guest_RAM
desc-wraps-around            121 virtqueue_buffer_lies_outside_guest_RAM
desc-points-at-mmio          121 virtqueue_buffer_lies_outside_guest_RAM
desc-next-out-of-range       121 next_index_out_of_range
desc-indirect                121 indirect_descriptor
desc-loop                    121 descriptor_chain_loops
desc-read-after-write        121 device-readable_buffer_after_a_device-writable
# rings and queue registers that lie
avail-index-ahead            121 available_index_ran_ahead
avail-head-out-of-range      121 head_index_out_of_range
rings-outside-ram            121 rings_lie_outside_guest_RAM
rings-at-end-of-ram          121 rings_lie_outside_guest_RAM -m 32M
rings-misaligned             121 rings_are_misaligned
queue-size-not-power-of-two  121 not_a_power_of_two
queue-size-huge              121 queue_size_above_the_maximum
queue-that-does-not-exist    121 queue_that_does_not_exist
queue-moved-while-live       121 queue_changed_while_enabled
notify-before-driver-ok      121 notify_before_the_driver_is_ready
notify-unknown-queue         121 notify_for_a_queue_that_does_not_exist
notify-unready-queue         121 virtqueue_that_is_not_ready
# buffers in the wrong direction are skipped, the run goes on
tx-device-writable           0   -
rx-device-readable           0   -
features-refused             0   -
# MMIO and I/O ports
mmio-no-device               121 read_of_unknown_MMIO_address_0xd000f000
mmio-beyond-ram              121 write_of_unknown_MMIO_address_0x20000000 -m 256M
mmio-8-byte-register         121 not_32-bit_and_aligned
mmio-1-byte-register         121 not_32-bit_and_aligned
mmio-unaligned-register      121 not_32-bit_and_aligned
mmio-write-read-only-register 121 read-only_or_unknown_register
mmio-config-out-of-range     121 outside_the_device's_config_space
port-unknown                 121 write_to_an_unknown_I/O_port
port-read                    121 unexpected_I/O_port_access
port-byte-exit               121 unexpected_I/O_port_access
port-string-exit             5   -
exit-status-wide             69  -
# block requests that lie (a bad sector range is an I/O error, status 1)
blk-short-header             121 request_header_shorter_than_16_bytes --ro=d=DATA
blk-no-status                121 request_has_no_status_byte --ro=d=DATA
blk-read-into-readable       121 read_request_carries_data --ro=d=DATA
blk-data-not-sectors         1   - --ro=d=DATA
blk-read-beyond-end          1   - --ro=d=DATA
blk-sector-overflow          1   - --ro=d=DATA
blk-write-read-only          1   - --ro=d=DATA
blk-unknown-type             2   - --ro=d=DATA
blk-scribble                 123 workdir_.*corrupt --workdir=WORK
# the network: a kernel that skips its own checks meets the broker's
net-connect-metadata         0   - --allow-net=0.0.0.0/0
net-resolve-unlisted         0   - --allow-net=api.example.com
net-data-unopened            0   - --allow-net=127.0.0.1:9
net-length-lie               121 a_message_whose_length_is_not_its_header's --allow-net=127.0.0.1:9
# the report page and the CPU
report-bad-fault             122 guest_reported_a_fault_with_signal_9999
report-panic-unterminated    122 guest_kernel_panic:_?????
report-sleep-forever         124 timed_out_after_2_s
spin                         124 timed_out_after_2_s
halt                         124 timed_out_after_2_s
triple-fault                 122 triple_fault
unknown-msr                  122 triple_fault
output-flood                 153 output_limit_of_100000_bytes_reached;_run_stopped --output-limit=100000
# requests whose data rewrites the ring: a notify serves what was pending then
blk-dma-once                 0   - --workdir=WORK
blk-request-too-big          0   - --workdir=WORK
EOF_SCENARIOS

n_scenarios=$n

# A guest whose read requests refill the queue (blk-dma-loop, from the first
# security review) is stopped by either limit, promptly, with one line (and
# the write-back's notice that the run failed).
for limit in "-t 2:124:timed out after 2 s" "--cpu-time 2:152:CPU time limit of 2 s reached"; do
	opt=${limit%%:*} want=${limit#*:} want=${want%%:*} msg=${limit##*:}
	start=$(date +%s%N)
	# shellcheck disable=SC2086
	timeout -s KILL 20 "$HT" run $opt -w "$TMP/w" -e EVIL=blk-dma-loop lua </dev/null >"$TMP/out" 2>"$TMP/err"
	st=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	[ "$st" = "$want" ] && [ "$ms" -lt 8000 ]; ok $? "blk-dma-loop, $opt: $want in $ms ms (status $st)"
	grep -v 'the workdir was still written back' "$TMP/err" >"$TMP/err.own"
	[ "$(grep -c . "$TMP/err.own")" = 1 ] && grep -q "^husk: $msg; run stopped\$" "$TMP/err.own"
	ok $? "blk-dma-loop, $opt: one line, '$msg'"
done

# Many transmit chains in one notify to a stdout nobody reads: -t still ends
# the run (no write may start after the stop request).
mkfifo "$TMP/fifo"
sleep 30 <"$TMP/fifo" &
reader=$!
start=$(date +%s%N)
timeout -s KILL 20 "$HT" run -t 2 -e EVIL=tx-blocked lua </dev/null >"$TMP/fifo" 2>"$TMP/err"
st=$?
ms=$((($(date +%s%N) - start) / 1000000))
kill $reader
[ "$st" = 124 ] && [ "$ms" -lt 8000 ]; ok $? "tx-blocked, stdout never read: 124 in $ms ms (status $st)"
ok "$(pgrep -x husk-test | wc -l)" "no husk-test process is left"
is "$(sha256sum <"$TMP/data/f")" "$data_sum" "host: the read-only dataset is unchanged"
is "$(ls -A "$TMP/w")" "" "host: the scribbled workdir wrote nothing back"
ls -A / | diff - "$TMP/root.before" >/dev/null; ok $? "host: no new entries in /"
is "$(ls "$TMP" | grep -c husk-workdir)" 0 "host: no temporary workdir image is left"
[ "$n_scenarios" -ge 40 ]; ok $? "at least 40 scenarios ran ($n_scenarios)"
done_testing
