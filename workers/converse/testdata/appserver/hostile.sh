#!/bin/sh
# A hostile stand-in for `codex app-server`: what it does is $1. The
# conversation numbers its requests from 1: initialize, thread/start,
# then turn/start.
handshake() {
	read -r line
	echo '{"id":1,"result":{"userAgent":"hostile"}}'
	read -r line # initialized
	read -r line
	echo '{"id":2,"result":{"thread":{"id":"thread-1"}}}'
}
case "$1" in
junk) echo 'this is not JSON-RPC'; exec sleep 30 ;;
long) tr -d '\n' </dev/zero & exec sleep 30 ;; # keeps its stdin open
silent) exec sleep 30 ;;
refuse) read -r line; echo '{"id":1,"error":{"code":-32000,"message":"not today"}}'; exec sleep 30 ;;
nothread) read -r line; echo '{"id":1,"result":{}}'; read -r line; read -r line; echo '{"id":2,"result":{"thread":7}}'; exec sleep 30 ;;
odd)
	handshake
	read -r line # turn/start
	# Odd fields, unknown ids, a request of no known kind, then junk.
	echo '{"id":3,"result":{"turn":{"id":"turn-1","status":"inProgress"}}}'
	echo '{"method":"turn/started","params":{"threadId":"thread-1","turn":null}}'
	echo '{"method":"item/started","params":{"item":{"type":"commandExecution","command":42}}}'
	echo '{"method":"item/completed","params":{"item":null,"turnId":"turn-1"}}'
	echo '{"method":"thread/tokenUsage/updated","params":{"tokenUsage":{"total":"lots"}}}'
	echo '{"method":"item/commandExecution/requestApproval","id":{"x":[1]},"params":7}'
	echo '{"method":"item/fileChange/requestApproval","id":9,"params":{"turnId":"turn-1","itemId":"nope"}}'
	echo '{"method":"no/such/request","id":10,"params":{}}'
	echo '{"id":"99","result":null}'
	echo '{}'
	echo '{"method":"turn/completed","params":{"threadId":"thread-1","turn":{"id":"turn-1","status":"failed","error":{"message":"the model is gone"}}}}'
	sleep 1
	echo '[1,2,3]' # a batch: Codex sends none
	exec sleep 30
	;;
mute)
	handshake
	exec sleep 30 # reads no more: turn/start is never answered
	;;
flood)
	handshake
	read -r line
	echo '{"id":3,"result":{"turn":{"id":"turn-1"}}}'
	i=0
	while [ $i -lt 1000 ]; do
		echo '{"method":"item/started","params":{"threadId":"thread-1","turnId":"turn-1","item":{"type":"commandExecution","id":"c'$i'","command":"step '$i'"}}}'
		i=$((i + 1))
	done
	echo '{"method":"turn/completed","params":{"threadId":"thread-1","turn":{"id":"turn-1","status":"completed"}}}'
	exec sleep 30
	;;
late)
	# The turn ends as the interrupt comes: its refusal follows the end.
	handshake
	read -r line
	echo '{"id":3,"result":{"turn":{"id":"turn-1"}}}'
	echo '{"method":"turn/started","params":{"threadId":"thread-1","turn":{"id":"turn-1"}}}'
	read -r line # turn/interrupt
	echo '{"method":"turn/completed","params":{"threadId":"thread-1","turn":{"id":"turn-1","status":"completed"}}}'
	echo '{"id":4,"error":{"code":-32600,"message":"no active turn"}}'
	exec sleep 30
	;;
crash)
	handshake
	read -r line
	echo '{"id":3,"result":{"turn":{"id":"turn-1"}}}'
	echo '{"method":"turn/started","params":{"threadId":"thread-1","turn":{"id":"turn-1"}}}'
	exit 3
	;;
esac
