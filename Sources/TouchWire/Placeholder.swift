public enum TouchWirePlaceholder {}
