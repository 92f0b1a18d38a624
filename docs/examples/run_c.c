#include <husk.h>
#include <stdio.h>

int main(void)
{
	struct husk_error err;
	husk_config *c = husk_config_new("python");
	husk_config_arg(c, "-c", &err);
	husk_config_arg(c, "print(1+1)", &err);
	if (husk_config_set(c, "timeout", "5", &err) || husk_config_set(c, "memory", "256M", &err)) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	husk_result *r = husk_run(c, &err);
	if (!r) {
		fprintf(stderr, "%s\n", err.message); /* husk's own error: husk did not run it */
		return 1;
	}
	size_t n;
	const char *out = husk_result_output(r, 1, &n);
	printf("%s, status %d: %.*s", husk_result_reason(r), husk_result_status(r), (int)n, out);
	husk_result_free(r);
	husk_config_free(c);
	return 0;
}
