/* terr.h: error codes of the tree modules (negative, apart from LIBXAC's
 * XAC_E* range). */
#ifndef TR_ERR_H
#define TR_ERR_H

#define TR_EFULL (-30800)    /* the file has no room for the operation */
#define TR_EBADFILE (-30801) /* not a tree file this code reads */
#define TR_EINVAL (-30802)   /* invalid configuration */

#endif
