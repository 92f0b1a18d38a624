/* SPDX-License-Identifier: GPL-2.0-only */
/* libhusk: a run's result, read from its audit records (the end record
 * says how the program ended; without one husk did not run it). */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include "lib_internal.h"

/* The last "husk: ..." line of stderr: husk's own word on why it stopped. */
static void last_husk_line(const char *tail, char *line, size_t size)
{
	line[0] = 0;
	for (const char *p = tail; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, "husk: ", 6)) {
			size_t n = strcspn(p, "\n");
			snprintf(line, size, "%.*s", (int)n, p);
		}
}

/* The run's end record: the last "end" of the audit's lines (looked for
 * from the last line back: it is the last record husk writes). */
static json_t *end_record(const char *audit)
{
	for (const char *stop = audit + strlen(audit); stop > audit;) {
		const char *line = stop;
		while (line > audit && line[-1] != '\n')
			line--;
		json_t *rec = json_loadb(line, (size_t)(stop - line), 0, NULL);
		json_t *ev = json_object_get(rec, "event");
		if (json_is_string(ev) && !strcmp(json_string_value(ev), "end"))
			return rec;
		json_decref(rec);
		stop = line > audit ? line - 1 : line;
	}
	return NULL;
}

husk_result *husk_lib_result_make(int status, char *audit, struct buffer out[3], const char *stderr_tail,
			 struct husk_error *err)
{
	json_t *end = end_record(audit);
	const char *reason = json_string_value(json_object_get(end, "reason"));
	if (!end || !reason) {
		char line[512];
		last_husk_line(stderr_tail, line, sizeof line);
		json_decref(end);
		husk_lib_fail(err, HUSK_E_HUSK, 0, "%s", line[0] ? line : "husk ended without running the program");
		if (err) {
			err->status = status;
			if (!line[0])
				snprintf(err->message, sizeof err->message,
					 "husk exited with status %d without running the program", status);
		}
		free(audit);
		return NULL;
	}
	husk_result *r = calloc(1, sizeof *r);
	char *why = r ? strdup(reason) : NULL;
	if (!why) {
		free(r);
		json_decref(end);
		free(audit);
		husk_lib_fail(err, HUSK_E_SYSTEM, ENOMEM, "out of memory");
		return NULL;
	}
	r->status = status;
	r->reason = why;
	r->audit = audit;
	r->end = end;
	for (int s = 1; s <= 2; s++)
		r->out[s] = out[s];
	return r;
}

void husk_result_free(husk_result *r)
{
	if (!r)
		return;
	free(r->reason);
	free(r->audit);
	json_decref(r->end);
	for (int s = 1; s <= 2; s++)
		free(r->out[s].data);
	free(r);
}

const char *husk_result_reason(const husk_result *r)
{
	return r ? r->reason : NULL;
}

int husk_result_status(const husk_result *r)
{
	return r ? r->status : -1;
}

const void *husk_result_output(const husk_result *r, int stream, size_t *len)
{
	if (!r || (stream != 1 && stream != 2)) {
		if (len)
			*len = 0;
		return "";
	}
	if (len)
		*len = r->out[stream].len;
	return r->out[stream].data ? r->out[stream].data : "";
}

const char *husk_result_audit(const husk_result *r)
{
	return r ? r->audit : NULL;
}

/* The end record's member by name; "a.b" looks into member a. */
static json_t *member(const husk_result *r, const char *name)
{
	if (!r || !name)
		return NULL;
	const char *dot = strchr(name, '.');
	if (!dot)
		return json_object_get(r->end, name);
	char outer[64];
	snprintf(outer, sizeof outer, "%.*s", (int)(dot - name), name);
	return json_object_get(json_object_get(r->end, outer), dot + 1);
}

int husk_result_number(const husk_result *r, const char *name, double *value)
{
	json_t *v = member(r, name);
	if (!json_is_number(v) || !value)
		return -1;
	*value = json_number_value(v);
	return 0;
}

const char *husk_result_string(const husk_result *r, const char *name)
{
	return json_string_value(member(r, name));
}
