#!/bin/bash
# Writes tests/data/pre_variant_game*.json: games stored by a chessd from
# before stored games kept a variant (commit ff26ea8: the state text of
# format 3 with no "variant" line), against a private redis-server. Each
# fixture holds the game's three keys as that chessd wrote them and what it
# answered to GET /v1/games/{id}. Not run by make test: the fixtures are
# committed. Usage, from the repository root:
#   git worktree add --detach /tmp/chessd-ff26ea8 ff26ea8
#   (cd /tmp/chessd-ff26ea8 && make deps && make build/chessd)
#   tests/data/pre_variant_games.sh /tmp/chessd-ff26ea8/build/chessd
set -euo pipefail
old_chessd=${1:?usage: $0 path/to/chessd-at-ff26ea8}
out=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'kill $chessd_pid $redis_pid 2>/dev/null; rm -rf "$work"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
redis_port=$(free_port)
http_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no >"$work/redis.log" 2>&1 &
redis_pid=$!
until redis-cli -p "$redis_port" ping >/dev/null 2>&1; do sleep 0.1; done
CHESSD_TOKEN_SECRET=fixture-secret-of-at-least-32-bytes "$old_chessd" serve --bind 127.0.0.1 --port "$http_port" \
    --redis "redis://127.0.0.1:$redis_port/0" --threads 1 --engine none >"$work/chessd.log" 2>&1 &
chessd_pid=$!
base=http://127.0.0.1:$http_port
until curl -sf "$base/healthz" >/dev/null; do sleep 0.1; done

# fixture FILE ABOUT CREATE-BODY MOVE...: the moves in SAN, each by the side to move.
fixture() {
    local file=$1 about=$2 body=$3
    shift 3
    curl -sf -X POST "$base/v1/games" -H 'Content-Type: application/json' -d "$body" >"$work/created.json"
    local id white black version=1 ply=0 token
    id=$(jq -r .id "$work/created.json")
    white=$(jq -r .tokens.white "$work/created.json")
    black=$(jq -r .tokens.black "$work/created.json")
    for move in "$@"; do
        token=$white
        [ $((ply % 2)) = 1 ] && token=$black
        curl -sf -X POST "$base/v1/games/$id/moves" -H "Authorization: Bearer $token" \
            -H 'Content-Type: application/json' -d "{\"move\":\"$move\",\"expected_version\":$version}" >/dev/null
        ply=$((ply + 1))
        version=$((version + 1))
    done
    curl -sf "$base/v1/games/$id?legal_moves=false" >"$work/game.json"
    local game="chessd:game:{$id}" moves="chessd:moves:{$id}" history="chessd:history:{$id}"
    for field in version wid hlen state; do
        redis-cli -p "$redis_port" HGET "$game" "$field" | head -c -1 >"$work/$field"
    done
    redis-cli -p "$redis_port" GET "$moves" | head -c -1 >"$work/moves"
    redis-cli -p "$redis_port" GET "$history" | head -c -1 >"$work/history"
    jq -n --arg about "$about" --arg game "$game" --arg moves "$moves" --arg history "$history" \
        --rawfile version "$work/version" --rawfile wid "$work/wid" --rawfile hlen "$work/hlen" \
        --rawfile state "$work/state" --rawfile moves_value "$work/moves" --rawfile history_value "$work/history" \
        --slurpfile got "$work/game.json" '
        ($got[0]) as $g |
        {about: ($about + ". Written by chessd at ff26ea8 (state text of format 3, before the variant line) against a private Redis: keys holds its three keys, expected what that chessd answered to GET /v1/games/{id}."),
         id: $g.id,
         keys: {game: {key: $game, hash: {version: $version, wid: $wid, hlen: $hlen, state: $state}},
                moves: {key: $moves, value: $moves_value}, history: {key: $history, value: $history_value}},
         expected: {version: $g.version, chess960: $g.chess960, initial_fen: $g.initial_fen, fen: $g.position.fen,
                    moves: $g.moves, status: $g.status, result: $g.result, termination: $g.termination,
                    white: $g.white.name, black: $g.black.name}}' >"$out/$file"
    echo "$file: $id, version $version"
}

fixture pre_variant_game.json "An active game between two people after eight moves (castling, a capture)" \
    '{"white":"Ann","black":"Bob","takeback":"free"}' e4 e5 Nf3 Nc6 Bc4 Bc5 O-O Nf6 d3 d6 Bg5 h6 Bxf6 Qxf6
fixture pre_variant_game_chess960.json "A Chess960 game two plies in" '{"chess960_position":100}' e4 e5
