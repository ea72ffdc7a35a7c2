/*
 * spec.c - a case as text: the one printer and the one parser of both
 * kinds of case, struct spec (the default mode) and struct xspec
 * (--cross-rank). A failing case is printed as a struct initializer,
 * "{.seed = 0x...ULL, .nodes = 2, ...}", to paste into regressions.inc or
 * crossrank.inc or to give back with --case; each kind is a table of its
 * fields below, which both directions read.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

/* How a field prints: always; only when it is not 0; as "= 1" when it is
 * not 0 (a flag); as two hex digits when it is not 0 (a byte); or, when it
 * is not 0, together with the `group` fields after it (MEMBER: they print
 * with it alone, whatever their value). */
enum show { ALWAYS, NONZERO, FLAG, BYTE, GROUP, MEMBER };

struct field {
  const char *name;
  size_t off;              /* of an int in the case; "seed" is the unsigned long long at 0 */
  enum show show;
  int group;               /* GROUP: how many fields after this one print with it */
  int min, max;            /* the range the generator and the harness's buffers are built for */
  const char *const *names; /* the value's names (an enum's), printed and read for it, or NULL */
  int nNames;
};

struct syntax {
  const struct field *fields;
  int nFields;
  int (*valid)(const void *c); /* what crosses fields, or NULL */
};

static const char *const numberingNames[CLUSTER_NUMBERINGS] = {"CLUSTER_NODE_MAJOR", "CLUSTER_ROUND_ROBIN",
                                                               "CLUSTER_PERMUTED"};

static const char *const faultNames[F_COUNT] = {
    "F_NONE",      "F_INTRA_VALUE", "F_INTRA_DUP", "F_NCHANNELS", "F_LOCALRANKS", "F_KANGA_COUNT",
    "F_RANK",      "F_NRANKS",      "F_NULL_GRAPH", "F_FRAG_RECV", "F_FRAG_SEND",  "F_FRAG_PREV",
    "F_FRAG_NEXT", "F_FRAG_NULL",   "F_FRAG_SWAP", "F_COMM_NCHANNELS", "F_REC_FLIP", "F_REC_ZERO"};

static const char *const xKindNames[X_COUNT] = {
    "X_NONE",      "X_RECV",     "X_SEND",      "X_PREV",  "X_NEXT",        "X_DUP",         "X_SWAP",
    "X_REC_FLIP",  "X_REC_COPY", "X_REC_STALE", "X_PLATFORM", "X_ENABLEPOD", "X_KANGA",      "X_GRAPH",
    "X_STALE_COUNT", "X_REC_VERSION", "X_REC_NONE", "X_ENV_PLATFORM"};

#define ANY INT_MIN, INT_MAX
#define NAMED(list) list, (int)(sizeof list / sizeof list[0])
#define S(F) #F, offsetof(struct spec, F)
#define X(F) #F, offsetof(struct xspec, F)

/* The fields both kinds lead with: the cluster. */
#define CLUSTER_FIELDS(M)                                                                   \
  {"seed", 0, ALWAYS, 0, ANY, NULL, 0}, {M(nodes), ALWAYS, 0, 1, 64, NULL, 0},               \
      {M(local), ALWAYS, 0, 1, NCCL_TOPO_MAX_NODES, NULL, 0}, {M(channels), ALWAYS, 0, 1, MAXCHANNELS, NULL, 0}, \
      {M(unequal), FLAG, 0, ANY, NULL, 0}

/* struct spec, in the order it prints (spec.h says what each field means). */
static const struct field specFields[] = {
    CLUSTER_FIELDS(S),
    {S(platform), NONZERO, 0, 0, 4, NULL, 0},
    {S(kanga), NONZERO, 0, -1, 5, NULL, 0},
    {S(pod), NONZERO, 0, ANY, NULL, 0},
    {S(userBufs), FLAG, 0, ANY, NULL, 0},
    {S(fault), GROUP, 3, 0, F_COUNT - 1, NAMED(faultNames)},
    {S(faultRank), MEMBER, 0, 0, INT_MAX, NULL, 0},
    {S(faultChannel), MEMBER, 0, 0, INT_MAX, NULL, 0},
    {S(faultValue), MEMBER, 0, ANY, NULL, 0},
    {S(postRanks), NONZERO, 0, 0, INT_MAX, NULL, 0},
    {S(numbering), NONZERO, 0, 0, CLUSTER_NUMBERINGS - 1, NAMED(numberingNames)},
    {S(order), GROUP, 1, 0, 3, NULL, 0},
    {S(oddRank), MEMBER, 0, 0, INT_MAX, NULL, 0},
    {S(locations), NONZERO, 0, 0, 3, NULL, 0},
    {S(nics), NONZERO, 0, 0, 2, NULL, 0},
};

static int spec_valid(const void *c) {
  const struct spec *s = c;
  return !(s->fault == F_NRANKS && s->faultValue > 1 << 20); /* the userRanks buffers it sizes */
}

/* struct xspec, in the order it prints. */
static const struct field xspecFields[] = {
    CLUSTER_FIELDS(X),
    {X(fill), BYTE, 0, 0, 255, NULL, 0},
    {X(numbering), NONZERO, 0, 0, CLUSTER_NUMBERINGS - 1, NAMED(numberingNames)},
    {X(policy), NONZERO, 0, 0, 2, NULL, 0},
    {X(pod), NONZERO, 0, 0, INT_MAX, NULL, 0},
    {X(platform), NONZERO, 0, 0, 1, NULL, 0},
    {X(kind), ALWAYS, 0, 0, X_COUNT - 1, NAMED(xKindNames)},
    {X(rank), ALWAYS, 0, 0, INT_MAX, NULL, 0},
    {X(channel), ALWAYS, 0, 0, INT_MAX, NULL, 0},
    {X(value), ALWAYS, 0, ANY, NULL, 0},
};

static int xspec_valid(const void *c) {
  const struct xspec *s = c;
  return s->channels * s->local <= NCCOM_RING_MAX_INTRA && s->nodes * s->local <= X_MAX_RANKS;
}

#undef ANY
#undef NAMED
#undef S
#undef X
#undef CLUSTER_FIELDS

static const struct syntax specSyntax = {specFields, (int)(sizeof specFields / sizeof specFields[0]), spec_valid};
static const struct syntax xspecSyntax = {xspecFields, (int)(sizeof xspecFields / sizeof xspecFields[0]), xspec_valid};

_Static_assert(offsetof(struct spec, seed) == 0 && offsetof(struct xspec, seed) == 0, "the seed leads both kinds");

static int *int_at(const void *c, const struct field *f) { return (int *)(uintptr_t)((const char *)c + f->off); }

/* Appends to out[size] at *n, dropping what does not fit. */
__attribute__((format(printf, 4, 5))) static void put(char *out, size_t size, size_t *n, const char *fmt, ...) {
  if (*n + 1 >= size) return;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(out + *n, size - *n, fmt, ap);
  va_end(ap);
  if (w > 0) *n = *n + (size_t)w < size ? *n + (size_t)w : size - 1;
}

/* A case as a struct initializer, "{...}" (a regressions.inc or
 * crossrank.inc line adds a comma). */
static void format_case(const struct syntax *sx, const void *c, char *out, size_t size) {
  size_t n = 0;
  int with = 0; /* fields still printing with their GROUP's first */
  out[0] = '\0';
  for (int i = 0; i < sx->nFields; i++, with -= with > 0) {
    const struct field *f = &sx->fields[i];
    if (i == 0) {
      put(out, size, &n, "{.seed = 0x%llxULL", *(const unsigned long long *)c);
      continue;
    }
    int v = *int_at(c, f);
    if (with == 0 && (f->show == MEMBER || (f->show != ALWAYS && v == 0))) continue;
    if (f->show == GROUP) with = f->group + 1;
    if (f->show == FLAG) put(out, size, &n, ", .%s = 1", f->name);
    else if (f->show == BYTE) put(out, size, &n, ", .%s = 0x%02x", f->name, v);
    else if (f->names && v >= 0 && v < f->nNames) put(out, size, &n, ", .%s = %s", f->name, f->names[v]);
    else put(out, size, &n, ", .%s = %d", f->name, v);
  }
  put(out, size, &n, "}");
}

/* Reads the ".name = value" fields of a case's text, as format_case writes
 * them (braces, commas and "ULL" optional; a field left out is 0): a value
 * is one of its field's names or an integer ("seed": 64 bits, the others
 * int's range). Returns 0, or -1 on anything malformed, an unknown field
 * or name, or a case outside the ranges of the field table. */
static int parse_case(const struct syntax *sx, const char *text, void *c, size_t caseSize) {
  char buf[1024];
  memset(c, 0, caseSize);
  snprintf(buf, sizeof buf, "%s", text);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",{}", &save); tok; tok = strtok_r(NULL, ",{}", &save)) {
    char name[32], value[64];
    if (sscanf(tok, " .%31[a-zA-Z] = %63s", name, value) != 2) {
      if (strspn(tok, " \t\n") == strlen(tok)) continue;
      return -1;
    }
    const struct field *f = NULL;
    for (int i = 0; i < sx->nFields && f == NULL; i++)
      if (strcmp(name, sx->fields[i].name) == 0) f = &sx->fields[i];
    if (f == NULL) return -1;
    int named = -1;
    for (int i = 0; i < f->nNames && named < 0; i++)
      if (strcmp(value, f->names[i]) == 0) named = i;
    if (named >= 0) {
      *int_at(c, f) = named;
      continue;
    }
    char *end;
    long long v = strtoll(value, &end, 0);
    if (end == value || (*end != '\0' && strcmp(end, "ULL") != 0)) return -1;
    if (f == &sx->fields[0]) *(unsigned long long *)c = strtoull(value, NULL, 0);
    else if (v < INT_MIN || v > INT_MAX) return -1;
    else *int_at(c, f) = (int)v;
  }
  for (int i = 1; i < sx->nFields; i++) {
    int v = *int_at(c, &sx->fields[i]);
    if (v < sx->fields[i].min || v > sx->fields[i].max) return -1;
  }
  return sx->valid && !sx->valid(c) ? -1 : 0;
}

void format_spec(char *out, size_t size, const struct spec *s) { format_case(&specSyntax, s, out, size); }
int parse_spec(const char *text, struct spec *s) { return parse_case(&specSyntax, text, s, sizeof *s); }
void format_xspec(char *out, size_t size, const struct xspec *s) { format_case(&xspecSyntax, s, out, size); }
int parse_xspec(const char *text, struct xspec *s) { return parse_case(&xspecSyntax, text, s, sizeof *s); }
