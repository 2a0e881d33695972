#!/bin/bash
# Writes the legacy game fixtures (tests/data/legacy_game*.json): records of
# the first storage format, made by a chessd of that format (commit c8df95b)
# against a private redis-server. Each fixture holds its key's HGETALL and
# what that chessd answered to GET /v1/games/{id}. Not run by make test: the
# fixtures are committed. Usage, from the repository root:
#   git worktree add /tmp/chessd-c8df95b c8df95b
#   (cd /tmp/chessd-c8df95b && mkdir -p build && touch build/.deps-installed && make build/chessd)
#   tests/data/legacy_games.sh /tmp/chessd-c8df95b/build/chessd
set -euo pipefail
old_chessd=${1:?usage: $0 path/to/chessd-at-c8df95b}
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
    --redis "redis://127.0.0.1:$redis_port/0" --threads 1 >"$work/chessd.log" 2>&1 &
chessd_pid=$!
base=http://127.0.0.1:$http_port
until curl -sf "$base/healthz" >/dev/null; do sleep 0.1; done

# post PATH TOKEN BODY
post() { curl -sf -X POST "$base$1" -H "Authorization: Bearer $2" -H 'Content-Type: application/json' -d "$3" >/dev/null; }

# fixture FILE ABOUT CREATE-BODY STEP...: a step is a move (SAN, by the side to
# move), offer:COLOUR or resign:COLOUR.
fixture() {
    local file=$1 about=$2 body=$3
    shift 3
    curl -sf -X POST "$base/v1/games" -H 'Content-Type: application/json' -d "$body" >"$work/created.json"
    local id white black version=1 ply=0
    id=$(jq -r .id "$work/created.json")
    white=$(jq -r .tokens.white "$work/created.json")
    black=$(jq -r .tokens.black "$work/created.json")
    for step in "$@"; do
        local token=$white
        case $step in
        *:black) token=$black ;;
        *:white) ;;
        *) [ $((ply % 2)) = 1 ] && token=$black ;;
        esac
        case $step in
        offer:*) post "/v1/games/$id/draw" "$token" "{\"action\":\"offer\",\"expected_version\":$version}" ;;
        resign:*) post "/v1/games/$id/resign" "$token" "{\"expected_version\":$version}" ;;
        *) post "/v1/games/$id/moves" "$token" "{\"move\":\"$step\",\"expected_version\":$version}"; ply=$((ply + 1)) ;;
        esac
        version=$((version + 1))
    done
    curl -sf "$base/v1/games/$id" >"$work/game.json"
    redis-cli -p "$redis_port" HGET "chessd:game:$id" data | head -c -1 >"$work/data.json"
    jq -n --rawfile data "$work/data.json" --arg version "$(redis-cli -p "$redis_port" HGET "chessd:game:$id" version)" \
        --slurpfile game "$work/game.json" --arg about "$about" '
        ($game[0]) as $g |
        {about: ($about + ". Written by chessd at c8df95b (the first storage format) against a private Redis: hgetall is its key'"'"'s HGETALL, expected is what that chessd answered to GET /v1/games/{id}."),
         key: ("chessd:game:" + $g.id),
         hgetall: {version: $version, data: $data},
         expected: {version: $g.version, chess960: $g.chess960, initial_fen: $g.initial_fen, fen: $g.position.fen,
                    plies: ($g.moves | length), moves: $g.moves, status: $g.status, result: $g.result,
                    termination: $g.termination, draw_offer: $g.draw_offer, white: $g.white.name, black: $g.black.name}}' \
        >"$out/$file"
    echo "$file: $id, version $version"
}

fixture legacy_game.json \
    "An active game with a standing draw offer by white: en passant, a promotion with capture, castling on both sides" \
    '{"white":"Zoë Ñúñez 象棋","black":"Bob"}' \
    e4 d5 e5 f5 exf6 Nc6 fxg7 Be6 gxh8=N Qd6 Nf3 O-O-O Bc4 Bh6 O-O Nf6 d3 a6 Re1 Kb8 offer:white
fixture legacy_game_checkmate.json "A game ended by checkmate" '{"white":"Anna","black":"Boris"}' \
    e4 e5 Qh5 Nc6 Bc4 Nf6 'Qxf7#'
fixture legacy_game_chess960_resigned.json \
    "A Chess960 game (castling as king takes rook) that black resigned; white has no name" \
    '{"chess960":true,"fen":"rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 w EAea - 0 1","white":"","black":"Černý"}' \
    O-O O-O-O d4 resign:black
