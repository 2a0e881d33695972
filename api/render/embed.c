/* The embeddable live board (embed.h): one page, its style and script
 * inline and allowed by their SHA-256 in the Content-Security-Policy. It
 * runs nothing else and loads only the board picture (board.svg), the game
 * (GET ../{id}) and its event stream (events), relative to its own address.
 * The page holds no game data: the script reads the game and writes every
 * name and move with textContent, never as markup. */
#include "embed.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The board picture is 320 pixels wide and as tall as its own proportions:
 * a variant's pockets add strips. */
static const char style[] =
    "body{margin:0;padding:8px;font:14px/1.35 system-ui,sans-serif;color:#222;background:#fff;display:flex;"
    "flex-wrap:wrap;gap:12px}"
    "#board{display:block;width:320px;height:auto}"
    ".player{display:flex;justify-content:space-between;width:320px;padding:3px 0}"
    ".name{font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;max-width:220px}"
    ".clock{font-variant-numeric:tabular-nums;padding:0 6px;border-radius:3px;background:#eee}"
    ".clock.running{background:#2b2b2b;color:#fff}"
    "#side{min-width:160px;max-width:320px}"
    "#opening{font-style:italic;margin-bottom:6px}"
    "#moves{margin:0;padding-left:2.2em;max-height:260px;overflow-y:auto}"
    "#result{font-weight:700;margin-top:6px}"
    "#status{color:#888;font-size:12px}";

static const char script[] =
    "'use strict';(function(){"
    "var id=document.body.getAttribute('data-game'),game=null,got=0,shown=0,es=null,busy=false,again=false;"
    "function $(s){return document.getElementById(s);}"
    "function put(el,t){el.textContent=t;}"
    "function fmt(ms){if(ms<0)ms=0;var s=Math.floor(ms/1000),m=Math.floor(s/60);s%=60;"
    "return m+':'+(s<10?'0':'')+s+(ms<10000?'.'+Math.floor(ms%1000/100):'');}"
    "function clocks(){var c=game&&game.clock;[['white','bottom'],['black','top']].forEach(function(p){"
    "var el=$(p[1]).querySelector('.clock');if(!c){put(el,'');return;}"
    "var ms=c[p[0]+'_ms'];if(c.running===p[0])ms-=Date.now()-got;"
    "put(el,fmt(ms));el.className='clock'+(c.running===p[0]?' running':'');});}"
    "function show(g){game=g;got=Date.now();"
    "put($('top').querySelector('.name'),g.black.name||'Black');"
    "put($('bottom').querySelector('.name'),g.white.name||'White');"
    "if(g.version!==shown){shown=g.version;$('board').src='board.svg?coordinates=false&size=320&v='+g.version;}"
    "var list=$('moves');list.textContent='';"
    "for(var i=0;i<g.moves.length;i+=2){var li=document.createElement('li');"
    "li.textContent=g.moves[i].san+(g.moves[i+1]?' '+g.moves[i+1].san:'');list.appendChild(li);}"
    "list.scrollTop=list.scrollHeight;"
    "var o=g.position.opening;put($('opening'),o?o.eco+' '+o.name:'');"
    "put($('result'),g.status==='active'?'':g.result+' ('+(g.termination||g.status).replace(/_/g,' ')+')');"
    "document.body.setAttribute('data-version',String(g.version));"
    "clocks();if(g.status!=='active'&&es){es.close();es=null;put($('status'),'');}}"
    "function load(){if(busy){again=true;return;}busy=true;"
    "fetch('../'+id+'?legal_moves=false',{cache:'no-store'}).then(function(r){return r.ok?r.json():null;})"
    ".then(function(g){if(g&&(!game||g.version>=game.version))show(g);}).catch(function(){})"
    ".then(function(){busy=false;if(again){again=false;load();}});}"
    "function listen(){es=new EventSource('events');"
    "es.addEventListener('game',function(e){show(JSON.parse(e.data));});"
    "es.addEventListener('change',function(){load();});"
    "es.onopen=function(){put($('status'),'');};"
    "es.onerror=function(){if(es)put($('status'),'reconnecting');};}"
    "setInterval(clocks,100);listen();})();";

static const char page_head[] =
    "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
    "<meta name=\"referrer\" content=\"no-referrer\"><title>chessd game</title><style>";
static const char page_body[] =
    "</style></head><body data-game=\"";
static const char page_tail[] =
    "\"><div id=\"board-side\"><div class=\"player\" id=\"top\"><span class=\"name\"></span><span class=\"clock\">"
    "</span></div><img id=\"board\" alt=\"the board\" width=\"320\" height=\"320\"><div class=\"player\" "
    "id=\"bottom\"><span class=\"name\"></span><span class=\"clock\"></span></div></div><div id=\"side\"><div "
    "id=\"opening\"></div><ol id=\"moves\"></ol><div id=\"result\"></div><div id=\"status\"></div></div><script>";
static const char page_end[] = "</script></body></html>\n";

/* The policy, made once (the page and the setting never change while the
 * process runs), under the lock. */
static pthread_mutex_t policy_lock = PTHREAD_MUTEX_INITIALIZER;
static char policy[1024];
static bool policy_made;

/* The base64 of text's SHA-256 (44 characters) into out; false when it cannot be made. */
static bool hash_of(const char *text, char out[64])
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    if (EVP_Digest(text, strlen(text), digest, &length, EVP_sha256(), NULL) != 1 || length != 32)
        return false;
    EVP_EncodeBlock((unsigned char *)out, digest, (int)length);
    return true;
}

const char *embed_policy(const char *frame_ancestors)
{
    pthread_mutex_lock(&policy_lock);
    char script_hash[64], style_hash[64];
    if (!policy_made && hash_of(script, script_hash) && hash_of(style, style_hash)) {
        int n = snprintf(policy, sizeof policy,
                         "default-src 'none'; script-src 'sha256-%s'; style-src 'sha256-%s'; img-src 'self'; "
                         "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors %s",
                         script_hash, style_hash, frame_ancestors);
        policy_made = n > 0 && (size_t)n < sizeof policy;
    }
    pthread_mutex_unlock(&policy_lock);
    return policy_made ? policy : NULL;
}

void embed_page(buf_t *out, const char *id)
{
    buf_puts(out, page_head);
    buf_puts(out, style);
    buf_puts(out, page_body);
    buf_puts(out, id); /* a game id: base64url characters only (the caller checked) */
    buf_puts(out, page_tail);
    buf_puts(out, script);
    buf_puts(out, page_end);
}
