// Placeholder: replaced by the wiring.
print("touchbridge")
