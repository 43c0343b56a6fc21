// The program each module's link check builds (src/modules.cmake): linking it
// with the whole module and only its declared modules is the check.
int main() { return 0; }
